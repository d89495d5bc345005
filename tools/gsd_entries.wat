;; The check of a GSD file's used index entries and their columns (lib/framings/gsd/entries.ts),
;; compiled by tools/gen_byteswap_wasm.ts (`tools/gsd_entries.wat` as its argument) into the bytes
;; embedded in lib/framings/gsd/entries_wasm.ts. WebAssembly runs at compiled speed from its first
;; call, where JavaScript starts in V8's interpreter (about 0.7 us an entry, 5 ms a first lookup
;; of the 7000 entries of a table file) and is optimised only after many entries.
;;
;; Memory (little-endian, offsets in bytes):
;;   STATE    0     prevFrame i64 @0, next i64 @8 (first frame whose start is not set), base i64
;;                  @16 (frame of STARTS[0]), slots i64 @24, size f64 @32, prevId i32 @40,
;;                  names i32 @44, byId i32 @48, why i32 @52 (why `run` stopped)
;;   KINDS    64    4096 kinds of 32 bytes: N i64 @0, data bytes f64 @8, M i32 @16, tail i32 @20
;;   LAST     131136  65536 i32: the last kind of each chunk id (-1: none)
;;   LOC      393280  2048 f64: data location of each entry of the block
;;   KIND     409664  2048 u16: kind of each entry of the block
;;   STARTS   413760  16384 u32: first entry of frames base, base + 1, ...
;;   BLOCK    479296  2048 entries of 32 bytes as stored (frame u64, N u64, location i64, M u32,
;;                  id u16, type u8, flags u8)
(module
  (memory (export "mem") 9)

  ;; Checks and adds entries i.. of the BLOCK's `count` (entry e0 + i of the file: the order is
  ;; not checked for entry 0): a kind known for its id (LAST, KINDS: the same N, M, id, type and
  ;; flags as an entry checked before), a frame below `slots`, data [location, + bytes) inside
  ;; `size`, sorted after the entry before (by frame, then by id when byId). Writes LOC, KIND and
  ;; the STARTS of the frames up to its frame. Returns the entry it stopped at (count: all), why
  ;; in STATE: 0 done, 1 no kind known (the caller makes one or finds the entry bad), 2 a bad
  ;; frame, range or order, 3 STARTS is full (the caller empties it and moves base).
  (func (export "run") (param $e0 i32) (param $i i32) (param $count i32) (result i32)
    (local $p i32) (local $kp i32) (local $k i32) (local $id i32) (local $tail i32)
    (local $why i32) (local $e i32) (local $prevId i32) (local $names i32) (local $byId i32)
    (local $frame i64) (local $n i64) (local $loc i64) (local $s i64)
    (local $prevFrame i64) (local $next i64) (local $base i64) (local $slots i64)
    (local $size f64)
    (local.set $prevFrame (i64.load (i32.const 0)))
    (local.set $next (i64.load (i32.const 8)))
    (local.set $base (i64.load (i32.const 16)))
    (local.set $slots (i64.load (i32.const 24)))
    (local.set $size (f64.load (i32.const 32)))
    (local.set $prevId (i32.load (i32.const 40)))
    (local.set $names (i32.load (i32.const 44)))
    (local.set $byId (i32.load (i32.const 48)))
    (block $stop
      (loop $entry
        (local.set $why (i32.const 0))
        (br_if $stop (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $p (i32.add (i32.const 479296) (i32.shl (local.get $i) (i32.const 5))))
        (local.set $frame (i64.load (local.get $p)))
        (local.set $n (i64.load offset=8 (local.get $p)))
        (local.set $loc (i64.load offset=16 (local.get $p)))
        (local.set $tail (i32.load offset=28 (local.get $p)))
        (local.set $id (i32.and (local.get $tail) (i32.const 0xffff)))
        ;; the kind: the id's last one, the same N, M and last word
        (local.set $why (i32.const 1))
        (br_if $stop (i32.ge_u (local.get $id) (local.get $names)))
        (local.set $k (i32.load offset=131136 (i32.shl (local.get $id) (i32.const 2))))
        (br_if $stop (i32.lt_s (local.get $k) (i32.const 0)))
        (local.set $kp (i32.add (i32.const 64) (i32.shl (local.get $k) (i32.const 5))))
        (br_if $stop (i32.ne (i32.load offset=20 (local.get $kp)) (local.get $tail)))
        (br_if $stop (i64.ne (i64.load (local.get $kp)) (local.get $n)))
        (br_if $stop (i32.ne (i32.load offset=16 (local.get $kp)) (i32.load offset=24 (local.get $p))))
        ;; frame, data range, order
        (local.set $why (i32.const 2))
        (local.set $e (i32.add (local.get $e0) (local.get $i)))
        (br_if $stop (i64.ge_u (local.get $frame) (local.get $slots)))
        (br_if $stop (i64.lt_s (local.get $loc) (i64.const 0)))
        (br_if $stop
          (f64.gt
            (f64.add (f64.convert_i64_s (local.get $loc)) (f64.load offset=8 (local.get $kp)))
            (local.get $size)))
        (if (i32.ne (local.get $e) (i32.const 0))
          (then
            (br_if $stop (i64.lt_u (local.get $frame) (local.get $prevFrame)))
            (br_if $stop
              (i32.and
                (local.get $byId)
                (i32.and
                  (i64.eq (local.get $frame) (local.get $prevFrame))
                  (i32.lt_u (local.get $id) (local.get $prevId)))))))
        ;; the starts of the frames up to this one
        (local.set $why (i32.const 3))
        (block $started
          (loop $start
            (br_if $started (i64.gt_u (local.get $next) (local.get $frame)))
            (local.set $s (i64.sub (local.get $next) (local.get $base)))
            (br_if $stop (i64.ge_u (local.get $s) (i64.const 16384)))
            (i32.store offset=413760
              (i32.shl (i32.wrap_i64 (local.get $s)) (i32.const 2))
              (local.get $e))
            (local.set $next (i64.add (local.get $next) (i64.const 1)))
            (br $start)))
        (f64.store offset=393280
          (i32.shl (local.get $i) (i32.const 3))
          (f64.convert_i64_s (local.get $loc)))
        (i32.store16 offset=409664 (i32.shl (local.get $i) (i32.const 1)) (local.get $k))
        (local.set $prevFrame (local.get $frame))
        (local.set $prevId (local.get $id))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $entry)))
    (i64.store (i32.const 0) (local.get $prevFrame))
    (i64.store (i32.const 8) (local.get $next))
    (i32.store (i32.const 40) (local.get $prevId))
    (i32.store (i32.const 52) (local.get $why))
    (local.get $i)))
