; Array types: [4 x i64], nested arrays, arrays of structs and pointers, indexing into them.
%Slot = type { i32, i32 }

@table = global [4 x i64] [i64 1, i64 2, i64 3, i64 4]
@grid = global [2 x [3 x i8]] [[3 x i8] c"abc", [3 x i8] c"def"]
@slots = global [2 x %Slot] [%Slot { i32 1, i32 2 }, %Slot { i32 3, i32 4 }]
@ptrs = global [2 x i32*] [i32* null, i32* null]
@zeros = global [16 x i32] zeroinitializer

define i64 @table_at(i64 %i) {
entry:
  %p = getelementptr inbounds [4 x i64], [4 x i64]* @table, i64 0, i64 %i
  %v = load i64, i64* %p, align 8
  ret i64 %v
}

define i8 @grid_at(i64 %r, i64 %c) {
entry:
  %p = getelementptr inbounds [2 x [3 x i8]], [2 x [3 x i8]]* @grid, i64 0, i64 %r, i64 %c
  %v = load i8, i8* %p
  ret i8 %v
}

define i32 @slot_second(i64 %i) {
entry:
  %p = getelementptr inbounds [2 x %Slot], [2 x %Slot]* @slots, i64 0, i64 %i, i32 1
  %v = load i32, i32* %p
  ret i32 %v
}

define [4 x i64] @whole_table() {
entry:
  %t = load [4 x i64], [4 x i64]* @table
  ret [4 x i64] %t
}

define i64 @first_of(<{ [2 x i64] }>* %box) {
entry:
  %p = getelementptr <{ [2 x i64] }>, <{ [2 x i64] }>* %box, i64 0, i32 0, i64 0
  %v = load i64, i64* %p
  ret i64 %v
}
