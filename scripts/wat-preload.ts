// Lets source runs and tests import the kernels' WebAssembly text (scripts/wat.ts).
import { plugin } from "bun";
import { watPlugin } from "./wat.ts";

plugin(watPlugin);
