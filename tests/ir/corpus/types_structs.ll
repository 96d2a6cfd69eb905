; Named, opaque, literal and packed struct types, nested and recursive.
%Object = type { i64, i8 addrspace(1)* }
%Pair = type { %Object addrspace(1)*, %Object addrspace(1)* }
%Opaque = type opaque
%Packed = type <{ i8, i32 }>
%List = type { i32, %List* }
%Empty = type {}

@packed = global %Packed <{ i8 1, i32 2 }>
@literal = global { i16, [2 x i8] } { i16 7, [2 x i8] c"ok" }
@packed_literal = global <{ i8, i64 }> <{ i8 9, i64 10 }>
@empty = global %Empty zeroinitializer
@handle = external global %Opaque

declare %Opaque* @get_handle()
declare void @use_handle(%Opaque*)

define i64 @header(%Object addrspace(1)* %o) {
entry:
  %p = getelementptr inbounds %Object, %Object addrspace(1)* %o, i64 0, i32 0
  %h = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %h
}

define %Object addrspace(1)* @second(%Pair* %pair) {
entry:
  %p = getelementptr inbounds %Pair, %Pair* %pair, i64 0, i32 1
  %o = load %Object addrspace(1)*, %Object addrspace(1)** %p, align 8
  ret %Object addrspace(1)* %o
}

define i32 @packed_field() {
entry:
  %p = getelementptr inbounds %Packed, %Packed* @packed, i32 0, i32 1
  %v = load i32, i32* %p, align 1
  ret i32 %v
}

define { i32, i1 } @literal_result(i32 %a) {
entry:
  %r0 = insertvalue { i32, i1 } undef, i32 %a, 0
  %r1 = insertvalue { i32, i1 } %r0, i1 true, 1
  ret { i32, i1 } %r1
}

define void @round_trip_handle() {
entry:
  %h = call %Opaque* @get_handle()
  call void @use_handle(%Opaque* %h)
  call void @use_handle(%Opaque* @handle)
  ret void
}

define i32 @list_head(%List* %l) {
entry:
  %p = getelementptr %List, %List* %l, i32 0, i32 0
  %v = load i32, i32* %p
  ret i32 %v
}
