; Parameter attributes (noalias, nonnull, align, dereferenceable, nocapture, readonly, zeroext,
; signext, immarg on an intrinsic), return attributes and function attributes.
declare void @llvm.memcpy.p0i8.p0i8.i64(i8* noalias nocapture writeonly, i8* noalias nocapture readonly, i64, i1 immarg)
declare noalias nonnull i8* @fresh_buffer(i64) nounwind
declare zeroext i1 @is_ready(i8 signext)

define void @copy16(i8* noalias nonnull align 8 dereferenceable(16) %dst, i8* noalias nocapture readonly align 8 dereferenceable(16) %src) nounwind {
entry:
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* align 8 %dst, i8* align 8 %src, i64 16, i1 false)
  ret void
}

define nonnull i8* @make(i64 %n) nounwind {
entry:
  %b = call noalias nonnull i8* @fresh_buffer(i64 %n)
  ret i8* %b
}

define signext i8 @narrow(i32 %x) readnone nounwind willreturn {
entry:
  %t = trunc i32 %x to i8
  ret i8 %t
}

define i64 @length(i64* nonnull readonly align 8 dereferenceable_or_null(8) %p) readonly nounwind {
entry:
  %v = load i64, i64* %p, align 8
  ret i64 %v
}

define zeroext i1 @ready_check(i8 signext %c) noinline optnone {
entry:
  %r = call zeroext i1 @is_ready(i8 signext %c)
  ret i1 %r
}

define i8 addrspace(1)* @heap_arg(i8 addrspace(1)* nonnull align 16 %obj) nounwind {
entry:
  ret i8 addrspace(1)* %obj
}
