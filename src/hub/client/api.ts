/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />
/**
 * The page's requests: only to this server's /api/, with the token `memsearch hub` printed, taken
 * from the address once, then kept for this tab only and out of the address bar; and which
 * navigation a view's data was asked for (a view whose data comes back late is dropped).
 */

const TOKEN_KEY = "memsearch-hub-token";

const startParams = new URLSearchParams(location.search);

const tokenInUrl = startParams.get("token");

if (tokenInUrl) {
  sessionStorage.setItem(TOKEN_KEY, tokenInUrl);
  startParams.delete("token");
  const rest = startParams.toString();
  history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}${location.hash}`);
}

const token = sessionStorage.getItem(TOKEN_KEY) ?? "";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function api<T>(path: string, params: Record<string, string | number> = {}): Promise<T> {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  return request<T>(url);
}

/**
 * The one request that changes memory (a forget): a POST with the token in its header, as JSON, so
 * that the server can tell it came from this page (same origin) and not from a form elsewhere.
 */
export async function post<T>(path: string, body: unknown): Promise<T> {
  return request<T>(new URL(path, location.origin), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function request<T>(url: URL, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<T> {
  let r: Response;
  try {
    r = await fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
  } catch {
    throw new ApiError(0, "The hub does not answer: it may have been stopped. Run `memsearch hub` again.");
  }
  const body = (await r.json().catch(() => ({}))) as { error?: string };
  if (!r.ok) throw new ApiError(r.status, body.error ?? r.statusText);
  return body as T;
}

/** Counts navigations: a view whose data comes back after the user went elsewhere is dropped. */
let navigation = 0;

/** The navigation now: a view's data asked for under another one is dropped. */
export const currentNavigation = (): number => navigation;

/** A new view is asked for: whatever the one before still waits for is superseded. */
export function navigated(): void {
  navigation++;
}

export class Superseded extends Error {}

/** A view's data; throws Superseded when another view was asked for while it loaded. */
export async function viewData<T>(path: string, params: Record<string, string | number> = {}): Promise<T> {
  const asked = navigation;
  let data: T;
  try {
    data = await api<T>(path, params);
  } catch (e) {
    throw asked === navigation ? e : new Superseded();
  }
  if (asked !== navigation) throw new Superseded();
  return data;
}
