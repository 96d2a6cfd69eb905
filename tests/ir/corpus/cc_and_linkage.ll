; Calling conventions (ccc, fastcc, coldcc, numeric cc 10 and cc 14) and function linkage
; (internal, private, linkonce_odr, weak, external) with unnamed_addr.
declare coldcc void @cold_path(i32)
declare cc 10 void @ghc_style(i64)

define fastcc i32 @fast_add(i32 %a, i32 %b) {
entry:
  %s = add i32 %a, %b
  ret i32 %s
}

define internal coldcc void @internal_cold() {
entry:
  ret void
}

define private i32 @private_helper() unnamed_addr {
entry:
  ret i32 1
}

define linkonce_odr i32 @inline_candidate(i32 %x) {
entry:
  ret i32 %x
}

define weak void @overridable() {
entry:
  ret void
}

define external ccc i32 @explicit_ccc() local_unnamed_addr {
entry:
  ret i32 0
}

define cc 14 void @preserve_most_style() {
entry:
  ret void
}

define i32 @caller(i32 %x) {
entry:
  %a = call fastcc i32 @fast_add(i32 %x, i32 1)
  call coldcc void @cold_path(i32 %a)
  call coldcc void @internal_cold()
  call cc 10 void @ghc_style(i64 0)
  call cc 14 void @preserve_most_style()
  %b = call i32 @private_helper()
  %c = call i32 @inline_candidate(i32 %b)
  call void @overridable()
  %d = tail call fastcc i32 @fast_add(i32 %a, i32 %c)
  ret i32 %d
}
