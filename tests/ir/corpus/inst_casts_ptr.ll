; Pointer casts: bitcast (pointers and same-size values), addrspacecast, ptrtoint and inttoptr.
%Object = type { i64 }

define i8* @to_bytes(%Object* %o) {
entry:
  %b = bitcast %Object* %o to i8*
  ret i8* %b
}

define %Object addrspace(1)* @heap_view(i8 addrspace(1)* %raw) {
entry:
  %o = bitcast i8 addrspace(1)* %raw to %Object addrspace(1)*
  ret %Object addrspace(1)* %o
}

define i8 addrspace(1)* @to_heap(i8* %p) {
entry:
  %h = addrspacecast i8* %p to i8 addrspace(1)*
  ret i8 addrspace(1)* %h
}

define i8* @from_heap(i8 addrspace(1)* %h) {
entry:
  %p = addrspacecast i8 addrspace(1)* %h to i8*
  ret i8* %p
}

define i64 @address_of(i8* %p) {
entry:
  %a = ptrtoint i8* %p to i64
  ret i64 %a
}

define i32* @from_address(i64 %a) {
entry:
  %p = inttoptr i64 %a to i32*
  ret i32* %p
}

define i32 @float_bits(float %f) {
entry:
  %i = bitcast float %f to i32
  ret i32 %i
}

define void (i32)* @as_callback(i8* %code) {
entry:
  %f = bitcast i8* %code to void (i32)*
  ret void (i32)* %f
}
