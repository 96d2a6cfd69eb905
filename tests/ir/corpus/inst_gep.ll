; getelementptr: plain and inbounds, single and multiple indices, struct field indices,
; i32 and i64 indices, negative offsets, on heap (addrspace 1) pointers.
%Inner = type { i16, [4 x i32] }
%Outer = type { i64, %Inner, i8 addrspace(1)* }

define i32* @deep(%Outer* %o, i64 %k) {
entry:
  %p = getelementptr inbounds %Outer, %Outer* %o, i64 0, i32 1, i32 1, i64 %k
  ret i32* %p
}

define i8* @byte_offset(i8* %base, i64 %off) {
entry:
  %p = getelementptr i8, i8* %base, i64 %off
  %q = getelementptr inbounds i8, i8* %p, i32 -4
  ret i8* %q
}

define %Outer* @nth(%Outer* %array, i32 %n) {
entry:
  %p = getelementptr %Outer, %Outer* %array, i32 %n
  ret %Outer* %p
}

define i8 addrspace(1)* addrspace(1)* @heap_field(%Outer addrspace(1)* %obj) {
entry:
  %f = getelementptr inbounds %Outer, %Outer addrspace(1)* %obj, i64 0, i32 2
  ret i8 addrspace(1)* addrspace(1)* %f
}

define i8 addrspace(1)* @interior(i8 addrspace(1)* %obj) {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %obj, i64 20000
  %back = getelementptr i8, i8 addrspace(1)* %d, i64 -20000
  ret i8 addrspace(1)* %back
}

define i16* @first_field_of_array([3 x %Inner]* %a) {
entry:
  %p = getelementptr inbounds [3 x %Inner], [3 x %Inner]* %a, i64 0, i64 2, i32 0
  ret i16* %p
}
