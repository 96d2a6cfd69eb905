; load and store: plain, with align, volatile, of pointers and aggregates, in address space 1.
%Cell = type { i32, i32 }

define void @copy(i32* %dst, i32* %src) {
entry:
  %v = load i32, i32* %src
  store i32 %v, i32* %dst
  ret void
}

define i64 @aligned_volatile(i64* %p) {
entry:
  %a = load i64, i64* %p, align 8
  %b = load volatile i64, i64* %p, align 8
  store volatile i64 %a, i64* %p, align 8
  store i64 %b, i64* %p, align 4
  %s = add i64 %a, %b
  ret i64 %s
}

define void @heap_field(i8 addrspace(1)* addrspace(1)* %field, i8 addrspace(1)* %value) {
entry:
  %old = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %field, align 8
  store i8 addrspace(1)* %value, i8 addrspace(1)* addrspace(1)* %field, align 8
  ret void
}

define %Cell @aggregate(%Cell* %c) {
entry:
  %v = load %Cell, %Cell* %c, align 4
  store %Cell zeroinitializer, %Cell* %c, align 4
  ret %Cell %v
}

define void @store_constants(i8* %b, i1* %f, double* %d) {
entry:
  store i8 -128, i8* %b, align 1
  store volatile i1 true, i1* %f
  store double 2.500000e+00, double* %d, align 8
  ret void
}
