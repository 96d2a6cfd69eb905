; Constant expressions: getelementptr inbounds, bitcast, ptrtoint and addrspacecast in initializers and operands.
@buffer = global [8 x i32] zeroinitializer
@third = global i32* getelementptr inbounds ([8 x i32], [8 x i32]* @buffer, i64 0, i64 2)
@as_bytes = global i8* bitcast ([8 x i32]* @buffer to i8*)
@address = global i64 ptrtoint ([8 x i32]* @buffer to i64)
@message = private constant [4 x i8] c"abc\00"

declare i32 @puts(i8*)

define i32 @say() {
entry:
  %r = call i32 @puts(i8* getelementptr inbounds ([4 x i8], [4 x i8]* @message, i64 0, i64 0))
  ret i32 %r
}

define i8 addrspace(1)* @global_as_heap() {
entry:
  ret i8 addrspace(1)* addrspacecast (i8* bitcast ([8 x i32]* @buffer to i8*) to i8 addrspace(1)*)
}

define void @store_through_cast(i32 %v) {
entry:
  store i32 %v, i32* bitcast (i8* getelementptr inbounds (i8, i8* bitcast ([8 x i32]* @buffer to i8*), i64 4) to i32*), align 4
  ret void
}
