; Variadic functions: declarations with "...", calls that spell the full function type.
declare void @v(i32, ...)
declare i32 @printf(i8*, ...)
declare void @log_all(...)

@fmt = private constant [7 x i8] c"%d %d\0A\00"

define void @variadic_calls(i64 %x) {
entry:
  call void (i32, ...) @v(i32 1, i64 2)
  call void (i32, ...) @v(i32 0)
  call void (i32, ...) @v(i32 3, i8 addrspace(1)* null, double 1.000000e+00, i64 %x)
  %fp = getelementptr inbounds [7 x i8], [7 x i8]* @fmt, i64 0, i64 0
  %n = call i32 (i8*, ...) @printf(i8* %fp, i32 1, i32 2)
  call void (...) @log_all()
  call void (...) @log_all(i32 %n, i64 %x)
  ret void
}

define void @variadic_indirect(void (i32, ...)* %f) {
entry:
  call void (i32, ...) %f(i32 2, i32 4, i32 8)
  ret void
}
