; Opaque pointers in gc "statepoint-example" functions before RewriteStatepointsForGC: ordinary
; calls with "deopt" bundles and call-site attributes, loops with ptr addrspace(1) phis.
declare void @foo()
declare ptr addrspace(1) @alloc(i64)

define ptr addrspace(1) @keep_alive(ptr addrspace(1) %obj, i32 %state) gc "statepoint-example" {
entry:
  call void @foo() [ "deopt"(i32 %state) ]
  %n = call ptr addrspace(1) @alloc(i64 16) "statepoint-id"="3"
  %same = icmp eq ptr addrspace(1) %obj, %n
  %r = select i1 %same, ptr addrspace(1) null, ptr addrspace(1) %obj
  ret ptr addrspace(1) %r
}

define ptr addrspace(1) @walk(ptr addrspace(1) %start, i64 %n) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %p = phi ptr addrspace(1) [ %start, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @foo()
  %next = getelementptr i8, ptr addrspace(1) %p, i64 8
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret ptr addrspace(1) %next
}
