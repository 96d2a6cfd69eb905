; Global variables with every common linkage and qualifier: global, constant, internal, private,
; external, thread_local, weak, linkonce_odr, common, unnamed_addr, local_unnamed_addr and align.
@plain = global i32 1
@readonly = constant i32 2
@hidden_state = internal global i64 0, align 8
@.private_str = private unnamed_addr constant [6 x i8] c"hello\00", align 1
@imported = external global i32
@imported_aligned = external global i64, align 16
@tls_counter = thread_local global i32 0, align 4
@tls_initial_exec = thread_local(initialexec) global i32 0
@weak_default = weak global i32 3
@merged = linkonce_odr global i32 4
@shared = common global i64 0, align 8
@local_ua = local_unnamed_addr global i8 5
@in_section = global i32 6, section ".gctoy_data", align 4
@visible = hidden global i32 7
@external_const = external constant [0 x i8]

define internal i32 @read_all() {
entry:
  %a = load i32, i32* @plain
  %b = load i32, i32* @readonly
  %c = load i32, i32* @imported
  %d = load i32, i32* @tls_counter, align 4
  %e = load i32, i32* @weak_default
  %s0 = add i32 %a, %b
  %s1 = add i32 %s0, %c
  %s2 = add i32 %s1, %d
  %s3 = add i32 %s2, %e
  ret i32 %s3
}

define i8* @greeting() {
entry:
  %p = getelementptr inbounds [6 x i8], [6 x i8]* @.private_str, i64 0, i64 0
  ret i8* %p
}
