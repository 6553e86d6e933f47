(module
  (memory (import "env" "memory") 1)
  ;; For each of the `count` Int8 vectors one after the other from base + first * stride: its dot
  ;; product with the Int8 query at `query` (`chunks` of 16 bytes, zero past its dimensions, so that
  ;; bytes read past a vector count for nothing), stored as i32 at `out`.
  (func (export "dotsFrom") (param $query i32) (param $chunks i32) (param $first i32) (param $count i32) (param $out i32) (param $base i32) (param $stride i32)
    (local $end i32) (local $at i32) (local $chunk i32) (local $sum v128) (local $v v128) (local $q v128)
    (local.set $at (i32.add (local.get $base) (i32.mul (local.get $first) (local.get $stride))))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $vector
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $sum (v128.const i32x4 0 0 0 0))
        (local.set $chunk (i32.const 0))
        (loop $component
          (local.set $v (v128.load (i32.add (local.get $at) (i32.shl (local.get $chunk) (i32.const 4)))))
          (local.set $q (v128.load (i32.add (local.get $query) (i32.shl (local.get $chunk) (i32.const 4)))))
          (local.set $sum (i32x4.add (local.get $sum)
            (i32x4.add
              (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_low_i8x16_s (local.get $v) (local.get $q)))
              (i32x4.extadd_pairwise_i16x8_s (i16x8.extmul_high_i8x16_s (local.get $v) (local.get $q))))))
          (local.set $chunk (i32.add (local.get $chunk) (i32.const 1)))
          (br_if $component (i32.lt_u (local.get $chunk) (local.get $chunks))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
            (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $at (i32.add (local.get $at) (local.get $stride)))
        (br $vector))))
)
