; Module header: source_filename, x86_64 target datalayout and triple, module flags and ident metadata.
; A comment line before the first entity.

source_filename = "gctoy/examples/header.toy" ; trailing comment after the header

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

define i32 @answer() {
entry:
  ret i32 42
}

!llvm.module.flags = !{!0, !1}
!llvm.ident = !{!2}

!0 = !{i32 1, !"wchar_size", i32 4}
!1 = !{i32 7, !"uwtable", i32 1}
!2 = !{!"gctoy corpus"}
