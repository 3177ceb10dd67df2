;; The integer first pass of a cold vector block (vector-cold.ts): `count` rows of int8 codes,
;; `stride` bytes each (a multiple of 16, zero past the dimension), from byte `codes` on, each
;; against the query's `stride` i16 codes at `qp`, summed exactly in i32 lanes (the query's scale
;; keeps every sum within an i32), the sum to i32 `out[k]`.
(module
  (import "m" "mem" (memory 1))
  (func (export "idots") (param $qp0 i32) (param $codes i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $r i32) (local $p i32) (local $vp i32) (local $qp i32) (local $end i32)
    (local $acc v128) (local $c v128)
    (local.set $p (local.get $codes))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $r) (local.get $count)))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $vp (local.get $p))
        (local.set $qp (local.get $qp0))
        (local.set $end (i32.add (local.get $p) (local.get $stride)))
        (block $row_done
          (loop $sixteens
            (br_if $row_done (i32.ge_u (local.get $vp) (local.get $end)))
            (local.set $c (v128.load (local.get $vp)))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $c)) (v128.load (local.get $qp)))))
            (local.set $acc (i32x4.add (local.get $acc) (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $c)) (v128.load offset=16 (local.get $qp)))))
            (local.set $vp (i32.add (local.get $vp) (i32.const 16)))
            (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
            (br $sixteens)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (i32.add (i32.add (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc))) (i32x4.extract_lane 2 (local.get $acc))) (i32x4.extract_lane 3 (local.get $acc))))
        (local.set $p (i32.add (local.get $p) (local.get $stride)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row)))))
