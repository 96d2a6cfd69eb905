; Opaque pointers with alloca, volatile and aligned memory access, and an intrinsic whose
; mangled name uses the opaque form (llvm.memcpy.p0.p0.i64).
declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1 immarg)

define i64 @spill(ptr addrspace(1) %obj) {
entry:
  %slot = alloca ptr addrspace(1), align 8
  %buf = alloca [16 x i8], align 16
  %copy = alloca [16 x i8], align 16
  store volatile ptr addrspace(1) %obj, ptr %slot, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %copy, ptr align 16 %buf, i64 16, i1 false)
  %back = load volatile ptr addrspace(1), ptr %slot, align 8
  %n = icmp ne ptr addrspace(1) %back, null
  %r = zext i1 %n to i64
  ret i64 %r
}
