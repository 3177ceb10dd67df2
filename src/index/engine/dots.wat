;; The float kernel of a vector scan (kernels.ts): for `count` rows of `dim` f32 from byte `rows` on,
;; `rowBytes` apart, the dot product of each row with the query at `qd` (dim f64, the query widened
;; once) goes to f64 `out[k]`.
;;
;; The sums are the JS loop's (kernels.ts dotAt) to the bit: each float widened to f64, each product
;; an f64 product (exact: two 24-bit mantissas fit in 53), the JS loop's four accumulators d0..d3 as
;; the lanes of $acc_a (d0 d1) and $acc_b (d2 d3), fed the same products in the same order, the last
;; dim % 4 products added to d0, and the lanes added at the end as ((d0 + d1) + d2) + d3. No fused
;; multiply-add: it would round differently.
(module
  (import "m" "mem" (memory 1))
  (func (export "dots") (param $qd i32) (param $rows i32) (param $count i32) (param $row_bytes i32) (param $dim i32) (param $out i32)
    (local $r i32) (local $p i32) (local $vp i32) (local $qp i32) (local $end8 i32) (local $end4 i32) (local $end i32)
    (local $acc_a v128) (local $acc_b v128)
    (local $d0 f64)
    (local $v v128)
    (local.set $p (local.get $rows))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $r) (local.get $count)))
        (local.set $acc_b (local.tee $acc_a (v128.const i64x2 0 0)))
        (local.set $vp (local.get $p))
        (local.set $qp (local.get $qd))
        ;; Where the 8-wide, the 4-wide and the one-at-a-time parts of the row end.
        (local.set $end8 (i32.add (local.get $p) (i32.shl (i32.and (local.get $dim) (i32.const -8)) (i32.const 2))))
        (local.set $end4 (i32.add (local.get $p) (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2))))
        (local.set $end (i32.add (local.get $p) (i32.shl (i32.and (local.get $dim) (i32.const -1)) (i32.const 2))))
        ;; Eight floats a step: two fours, one after the other, so the lanes see the JS loop's order.
        (block $eights_done
          (loop $eights
            (br_if $eights_done (i32.ge_u (local.get $vp) (local.get $end8)))
            (local.set $v (v128.load (local.get $vp)))
            (local.set $acc_a (f64x2.add (local.get $acc_a) (f64x2.mul (v128.load (local.get $qp)) (f64x2.promote_low_f32x4 (local.get $v)))))
            (local.set $acc_b (f64x2.add (local.get $acc_b) (f64x2.mul (v128.load offset=16 (local.get $qp))
              (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v))))))
            (local.set $v (v128.load offset=16 (local.get $vp)))
            (local.set $acc_a (f64x2.add (local.get $acc_a) (f64x2.mul (v128.load offset=32 (local.get $qp)) (f64x2.promote_low_f32x4 (local.get $v)))))
            (local.set $acc_b (f64x2.add (local.get $acc_b) (f64x2.mul (v128.load offset=48 (local.get $qp))
              (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v))))))
            (local.set $qp (i32.add (local.get $qp) (i32.const 64)))
            (local.set $vp (i32.add (local.get $vp) (i32.const 32)))
            (br $eights)))
        (if (i32.lt_u (local.get $vp) (local.get $end4))
          (then
            (local.set $v (v128.load (local.get $vp)))
            (local.set $acc_a (f64x2.add (local.get $acc_a) (f64x2.mul (v128.load (local.get $qp)) (f64x2.promote_low_f32x4 (local.get $v)))))
            (local.set $acc_b (f64x2.add (local.get $acc_b) (f64x2.mul (v128.load offset=16 (local.get $qp))
              (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $v) (local.get $v))))))
            (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
            (local.set $vp (i32.add (local.get $vp) (i32.const 16)))))
        ;; The JS loop adds the last dim % 4 products to d0.
        (local.set $d0 (f64x2.extract_lane 0 (local.get $acc_a)))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $vp) (local.get $end)))
            (local.set $d0 (f64.add (local.get $d0) (f64.mul (f64.load (local.get $qp)) (f64.promote_f32 (f32.load (local.get $vp))))))
            (local.set $qp (i32.add (local.get $qp) (i32.const 8)))
            (local.set $vp (i32.add (local.get $vp) (i32.const 4)))
            (br $tail)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 3)))
          (f64.add (f64.add (f64.add (local.get $d0) (f64x2.extract_lane 1 (local.get $acc_a))) (f64x2.extract_lane 0 (local.get $acc_b))) (f64x2.extract_lane 1 (local.get $acc_b))))
        (local.set $p (i32.add (local.get $p) (local.get $row_bytes)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row)))))
