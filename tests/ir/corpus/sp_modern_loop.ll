; Several statepoints in a loop: relocated values flow around the back edge through phis,
; a derived pointer is carried with its base, and the loop exit merges relocated values.
declare void @foo()
declare i1 @keep_going(i64)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_i1i64f(i64 immarg, i32 immarg, i1 (i64)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i1 @llvm.experimental.gc.result.i1(token) #0

define i8 addrspace(1)* @loop(i8 addrspace(1)* %start) gc "statepoint-example" {
entry:
  %d0 = getelementptr i8, i8 addrspace(1)* %start, i64 8
  br label %header

header:
  %base = phi i8 addrspace(1)* [ %start, %entry ], [ %base.2, %latch ]
  %cur = phi i8 addrspace(1)* [ %d0, %entry ], [ %next, %latch ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  ; first safepoint: a poll at the loop header
  %t1 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %base, i8 addrspace(1)* %cur) ]
  %base.1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %cur.1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 1)
  %i.next = add nuw i64 %i, 1
  ; second safepoint: the loop condition is itself a call
  %t2 = call token (i64, i32, i1 (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i1i64f(i64 2882400000, i32 0, i1 (i64)* @keep_going, i32 1, i32 0, i64 %i.next, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %base.1, i8 addrspace(1)* %cur.1) ]
  %go = call i1 @llvm.experimental.gc.result.i1(token %t2)
  %base.2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  %cur.2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 1)
  br i1 %go, label %latch, label %exit

latch:
  %next = getelementptr i8, i8 addrspace(1)* %cur.2, i64 8
  br label %header

exit:
  ret i8 addrspace(1)* %cur.2
}

define i8 addrspace(1)* @conditional_safepoint(i8 addrspace(1)* %obj, i64 %n) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %o = phi i8 addrspace(1)* [ %obj, %entry ], [ %o.merged, %continue ]
  %k = phi i64 [ 0, %entry ], [ %k.next, %continue ]
  %rem = and i64 %k, 15
  %poll = icmp eq i64 %rem, 0
  br i1 %poll, label %safepoint, label %continue

safepoint:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %o) ]
  %o.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  br label %continue

continue:
  %o.merged = phi i8 addrspace(1)* [ %o, %loop ], [ %o.r, %safepoint ]
  %k.next = add i64 %k, 1
  %done = icmp eq i64 %k.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret i8 addrspace(1)* %o.merged
}

attributes #0 = { nounwind readnone }
