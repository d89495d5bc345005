;; Byte reversal of 2-, 4- and 8-byte elements with WebAssembly SIMD (i8x16.swizzle).
;; Compiled by tools/gen_byteswap_wasm.ts into the bytes embedded in lib/bytes/byteswap.ts.
;; Each function reverses every element of memory[p, p + n) in place, 64 bytes per loop turn
;; and then 16 bytes per turn; the caller rounds n up to a multiple of 16 (the memory past
;; the data is scratch).
(module
  (memory (export "mem") 4)

  (func $run (param $p i32) (param $n i32) (param $m v128)
    (local $end i32) (local $end64 i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $end64 (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -64))))
    (block $done64
      (br_if $done64 (i32.ge_u (local.get $p) (local.get $end64)))
      (loop $l64
        (v128.store offset=0 (local.get $p)
          (i8x16.swizzle (v128.load offset=0 (local.get $p)) (local.get $m)))
        (v128.store offset=16 (local.get $p)
          (i8x16.swizzle (v128.load offset=16 (local.get $p)) (local.get $m)))
        (v128.store offset=32 (local.get $p)
          (i8x16.swizzle (v128.load offset=32 (local.get $p)) (local.get $m)))
        (v128.store offset=48 (local.get $p)
          (i8x16.swizzle (v128.load offset=48 (local.get $p)) (local.get $m)))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br_if $l64 (i32.lt_u (local.get $p) (local.get $end64)))))
    (block $done
      (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
      (loop $l
        (v128.store (local.get $p) (i8x16.swizzle (v128.load (local.get $p)) (local.get $m)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br_if $l (i32.lt_u (local.get $p) (local.get $end))))))

  (func (export "swap2") (param $p i32) (param $n i32)
    (call $run (local.get $p) (local.get $n)
      (v128.const i8x16 1 0 3 2 5 4 7 6 9 8 11 10 13 12 15 14)))

  (func (export "swap4") (param $p i32) (param $n i32)
    (call $run (local.get $p) (local.get $n)
      (v128.const i8x16 3 2 1 0 7 6 5 4 11 10 9 8 15 14 13 12)))

  (func (export "swap8") (param $p i32) (param $n i32)
    (call $run (local.get $p) (local.get $n)
      (v128.const i8x16 7 6 5 4 3 2 1 0 15 14 13 12 11 10 9 8))))
