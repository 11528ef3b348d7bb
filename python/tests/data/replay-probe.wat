;; A test-only component that imports the `kafka-consumer` interface of world `cleanup` (the
;; shipped cleanup component does not use it yet, so its import is elided) and drives it exactly
;; as the canonical ABI does: construct a replay-consumer, assign one partition at an offset, poll
;; once, drop the resource. Exports run(topic, partition, offset, max) -> (status, count, first
;; offset); status 0 = ok, 1 = assign returned kafka-error, 2 = poll returned kafka-error.
(component
  (import "action-state:cleanup/kafka-consumer@0.1.0" (instance $kc
    (type $po (record (field "partition" u32) (field "offset" u64)))
    (export "partition-offset" (type $po' (eq $po)))
    (type $ke (record (field "operation" string) (field "message" string) (field "retriable" bool)))
    (export "kafka-error" (type $ke' (eq $ke)))
    (type $cr (record (field "partition" u32) (field "offset" u64) (field "key" (option string)) (field "value" (option string))))
    (export "consumed-record" (type $cr' (eq $cr)))
    (export "replay-consumer" (type $rc (sub resource)))
    (export "[constructor]replay-consumer" (func (param "topic" string) (result (own $rc))))
    (type $lpo (list $po'))
    (export "[method]replay-consumer.assign" (func (param "self" (borrow $rc)) (param "start" $lpo) (result (result (error $ke')))))
    (type $lcr (list $cr'))
    (export "[method]replay-consumer.poll" (func (param "self" (borrow $rc)) (param "max-records" u32) (param "timeout-ms" u32) (result (result $lcr (error $ke')))))
  ))
  (alias export $kc "replay-consumer" (type $rc))
  (alias export $kc "[constructor]replay-consumer" (func $ctor))
  (alias export $kc "[method]replay-consumer.assign" (func $assign))
  (alias export $kc "[method]replay-consumer.poll" (func $poll))

  (core module $libc
    (memory (export "memory") 1)
    (global $bump (mut i32) (i32.const 4096))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $r i32)
      (local.set $r (i32.and (i32.add (global.get $bump) (i32.sub (local.get 2) (i32.const 1)))
                             (i32.xor (i32.sub (local.get 2) (i32.const 1)) (i32.const -1))))
      (global.set $bump (i32.add (local.get $r) (local.get 3)))
      (local.get $r)))
  (core instance $libc (instantiate $libc))
  (alias core export $libc "memory" (core memory $mem))
  (alias core export $libc "realloc" (core func $realloc))

  (core func $ctor_l (canon lower (func $ctor) (memory $mem) (realloc $realloc) string-encoding=utf8))
  (core func $assign_l (canon lower (func $assign) (memory $mem) (realloc $realloc)))
  (core func $poll_l (canon lower (func $poll) (memory $mem) (realloc $realloc)))
  (core func $drop_l (canon resource.drop $rc))

  (core module $main
    (import "libc" "memory" (memory 1))
    (import "kc" "ctor" (func $ctor (param i32 i32) (result i32)))
    (import "kc" "assign" (func $assign (param i32 i32 i32 i32)))
    (import "kc" "poll" (func $poll (param i32 i32 i32 i32)))
    (import "kc" "drop" (func $drop (param i32)))
    ;; Result tuple<u32, u32, u64> at 256: status @256, count @260, first offset @264.
    (func (export "run") (param $tp i32) (param $tl i32) (param $part i32) (param $off i64) (param $max i32) (result i32)
      (local $h i32)
      (i32.store (i32.const 256) (i32.const 0))
      (i32.store (i32.const 260) (i32.const 0))
      (i64.store (i32.const 264) (i64.const 0))
      (local.set $h (call $ctor (local.get $tp) (local.get $tl)))
      ;; list<partition-offset> of one element at 16: partition u32 @16, offset u64 @24.
      (i32.store (i32.const 16) (local.get $part))
      (i64.store (i32.const 24) (local.get $off))
      (call $assign (local.get $h) (i32.const 16) (i32.const 1) (i32.const 64))
      (if (i32.load8_u (i32.const 64))
        (then (i32.store (i32.const 256) (i32.const 1)) (call $drop (local.get $h)) (return (i32.const 256))))
      (call $poll (local.get $h) (local.get $max) (i32.const 10000) (i32.const 128))
      (if (i32.load8_u (i32.const 128))
        (then (i32.store (i32.const 256) (i32.const 2)) (call $drop (local.get $h)) (return (i32.const 256))))
      ;; ok payload at 132: list pointer @132, length @136; record 0's offset is at +8.
      (i32.store (i32.const 260) (i32.load (i32.const 136)))
      (if (i32.load (i32.const 136))
        (then (i64.store (i32.const 264) (i64.load offset=8 (i32.load (i32.const 132))))))
      (call $drop (local.get $h))
      (i32.const 256)))
  (core instance $kc_core
    (export "ctor" (func $ctor_l)) (export "assign" (func $assign_l))
    (export "poll" (func $poll_l)) (export "drop" (func $drop_l)))
  (core instance $m (instantiate $main (with "libc" (instance $libc)) (with "kc" (instance $kc_core))))
  (func $run (param "topic" string) (param "partition" u32) (param "offset" u64) (param "max" u32)
    (result (tuple u32 u32 u64))
    (canon lift (core func $m "run") (memory $mem) (realloc $realloc) string-encoding=utf8))
  (export "run" (func $run))
)
