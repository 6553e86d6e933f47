(module
  (memory (import "env" "memory") 1)
  ;; For each of the `count` Int8 vectors one after the other from base + first * stride: its dot
  ;; product with the Int8 query at `query` (`chunks` of 16 bytes, zero past its dimensions, so that
  ;; bytes read past a vector count for nothing), stored as i32 at `out`. Two vectors a pass, so that
  ;; each chunk of the query is loaded and widened once for both; each chunk's 16 products summed in
  ;; pairs by `i32x4.dot_i16x8_s` (one instruction on x64 and ARM) on its bytes widened to 16 bits.
  (func (export "dotsFrom") (param $query i32) (param $chunks i32) (param $first i32) (param $count i32) (param $out i32) (param $base i32) (param $stride i32)
    (local $end i32) (local $at i32) (local $offset i32) (local $bytes i32)
    (local $a v128) (local $b v128) (local $q v128) (local $low v128) (local $high v128) (local $v v128) (local $w v128)
    (local.set $at (i32.add (local.get $base) (i32.mul (local.get $first) (local.get $stride))))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $count) (i32.const 2))))
    (local.set $bytes (i32.shl (local.get $chunks) (i32.const 4)))
    (block $pairs
      (loop $pair
        (br_if $pairs (i32.gt_u (i32.add (local.get $out) (i32.const 8)) (local.get $end)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $offset (i32.const 0))
        (loop $component
          (local.set $q (v128.load (i32.add (local.get $query) (local.get $offset))))
          (local.set $low (i16x8.extend_low_i8x16_s (local.get $q)))
          (local.set $high (i16x8.extend_high_i8x16_s (local.get $q)))
          (local.set $v (v128.load (i32.add (local.get $at) (local.get $offset))))
          (local.set $w (v128.load (i32.add (i32.add (local.get $at) (local.get $stride)) (local.get $offset))))
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $low))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $high)))))
          (local.set $b (i32x4.add (local.get $b)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $low))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $high)))))
          (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
          (br_if $component (i32.lt_u (local.get $offset) (local.get $bytes))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
        (i32.store offset=4 (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $b)) (i32x4.extract_lane 1 (local.get $b)))
            (i32.add (i32x4.extract_lane 2 (local.get $b)) (i32x4.extract_lane 3 (local.get $b)))))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $at (i32.add (local.get $at) (i32.shl (local.get $stride) (i32.const 1))))
        (br $pair)))
    ;; An odd count's last vector.
    (if (i32.lt_u (local.get $out) (local.get $end))
      (then
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $offset (i32.const 0))
        (loop $component
          (local.set $q (v128.load (i32.add (local.get $query) (local.get $offset))))
          (local.set $v (v128.load (i32.add (local.get $at) (local.get $offset))))
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (i16x8.extend_low_i8x16_s (local.get $q)))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (i16x8.extend_high_i8x16_s (local.get $q))))))
          (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
          (br_if $component (i32.lt_u (local.get $offset) (local.get $bytes))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a))))))))

  ;; `dotsFrom` for a scan that keeps only what beats a floor: for each of the `count` vectors from
  ;; base + first * stride, its dot product times its scale (a Float32 at `scaleOffset` in its own
  ;; record, which the query's zero bytes past its dimensions leave out of the product), as f64 (as
  ;; JavaScript multiplies an Int32 by a Float32); those above `floor` written as their index among
  ;; the `count` (i32, at `indices`) and their score (f64, at `scores`), in order. Returns how many.
  ;; A scan's scores are mostly below what it has kept: testing them here spares a loop in JavaScript
  ;; over every one.
  (func (export "dotsAbove") (param $query i32) (param $chunks i32) (param $first i32) (param $count i32) (param $base i32) (param $stride i32) (param $scaleOffset i32) (param $floor f64) (param $indices i32) (param $scores i32) (result i32)
    (local $at i32) (local $index i32) (local $found i32) (local $offset i32) (local $bytes i32) (local $score f64)
    (local $a v128) (local $b v128) (local $q v128) (local $low v128) (local $high v128) (local $v v128) (local $w v128)
    (local.set $at (i32.add (local.get $base) (i32.mul (local.get $first) (local.get $stride))))
    (local.set $bytes (i32.shl (local.get $chunks) (i32.const 4)))
    (block $pairs
      (loop $pair
        (br_if $pairs (i32.gt_u (i32.add (local.get $index) (i32.const 2)) (local.get $count)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $offset (i32.const 0))
        (loop $component
          (local.set $q (v128.load (i32.add (local.get $query) (local.get $offset))))
          (local.set $low (i16x8.extend_low_i8x16_s (local.get $q)))
          (local.set $high (i16x8.extend_high_i8x16_s (local.get $q)))
          (local.set $v (v128.load (i32.add (local.get $at) (local.get $offset))))
          (local.set $w (v128.load (i32.add (i32.add (local.get $at) (local.get $stride)) (local.get $offset))))
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (local.get $low))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (local.get $high)))))
          (local.set $b (i32x4.add (local.get $b)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $w)) (local.get $low))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $w)) (local.get $high)))))
          (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
          (br_if $component (i32.lt_u (local.get $offset) (local.get $bytes))))
        (local.set $score (f64.mul
          (f64.convert_i32_s (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
          (f64.promote_f32 (f32.load (i32.add (local.get $at) (local.get $scaleOffset))))))
        (if (f64.gt (local.get $score) (local.get $floor))
          (then
            (i32.store (i32.add (local.get $indices) (i32.shl (local.get $found) (i32.const 2))) (local.get $index))
            (f64.store (i32.add (local.get $scores) (i32.shl (local.get $found) (i32.const 3))) (local.get $score))
            (local.set $found (i32.add (local.get $found) (i32.const 1)))))
        (local.set $score (f64.mul
          (f64.convert_i32_s (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $b)) (i32x4.extract_lane 1 (local.get $b)))
            (i32.add (i32x4.extract_lane 2 (local.get $b)) (i32x4.extract_lane 3 (local.get $b)))))
          (f64.promote_f32 (f32.load (i32.add (i32.add (local.get $at) (local.get $stride)) (local.get $scaleOffset))))))
        (if (f64.gt (local.get $score) (local.get $floor))
          (then
            (i32.store (i32.add (local.get $indices) (i32.shl (local.get $found) (i32.const 2))) (i32.add (local.get $index) (i32.const 1)))
            (f64.store (i32.add (local.get $scores) (i32.shl (local.get $found) (i32.const 3))) (local.get $score))
            (local.set $found (i32.add (local.get $found) (i32.const 1)))))
        (local.set $index (i32.add (local.get $index) (i32.const 2)))
        (local.set $at (i32.add (local.get $at) (i32.shl (local.get $stride) (i32.const 1))))
        (br $pair)))
    ;; An odd count's last vector.
    (if (i32.lt_u (local.get $index) (local.get $count))
      (then
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $offset (i32.const 0))
        (loop $component
          (local.set $q (v128.load (i32.add (local.get $query) (local.get $offset))))
          (local.set $v (v128.load (i32.add (local.get $at) (local.get $offset))))
          (local.set $a (i32x4.add (local.get $a)
            (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $v)) (i16x8.extend_low_i8x16_s (local.get $q)))
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $v)) (i16x8.extend_high_i8x16_s (local.get $q))))))
          (local.set $offset (i32.add (local.get $offset) (i32.const 16)))
          (br_if $component (i32.lt_u (local.get $offset) (local.get $bytes))))
        (local.set $score (f64.mul
          (f64.convert_i32_s (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
            (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
          (f64.promote_f32 (f32.load (i32.add (local.get $at) (local.get $scaleOffset))))))
        (if (f64.gt (local.get $score) (local.get $floor))
          (then
            (i32.store (i32.add (local.get $indices) (i32.shl (local.get $found) (i32.const 2))) (local.get $index))
            (f64.store (i32.add (local.get $scores) (i32.shl (local.get $found) (i32.const 3))) (local.get $score))
            (local.set $found (i32.add (local.get $found) (i32.const 1)))))))
    (local.get $found))
)
