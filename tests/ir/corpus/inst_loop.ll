; A counted loop and a nested loop with phis, back edges, an early exit and loop-carried pointers.
define i64 @sum_to(i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %loop ]
  %acc.next = add nsw i64 %acc, %i
  %i.next = add nuw nsw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %exit

exit:
  ret i64 %acc.next
}

define i32 @nested(i32 %rows, i32 %cols) {
entry:
  br label %outer

outer:
  %r = phi i32 [ 0, %entry ], [ %r.next, %outer.latch ]
  %total = phi i32 [ 0, %entry ], [ %row.total, %outer.latch ]
  br label %inner

inner:
  %c = phi i32 [ 0, %outer ], [ %c.next, %inner ]
  %t = phi i32 [ %total, %outer ], [ %t.next, %inner ]
  %t.next = add i32 %t, 1
  %c.next = add i32 %c, 1
  %inner.more = icmp slt i32 %c.next, %cols
  br i1 %inner.more, label %inner, label %outer.latch

outer.latch:
  %row.total = phi i32 [ %t.next, %inner ]
  %r.next = add i32 %r, 1
  %outer.more = icmp slt i32 %r.next, %rows
  br i1 %outer.more, label %outer, label %done

done:
  ret i32 %row.total
}

define i8 addrspace(1)* @walk(i8 addrspace(1)* %start, i64 %steps) {
entry:
  %empty = icmp eq i64 %steps, 0
  br i1 %empty, label %out, label %body

body:
  %p = phi i8 addrspace(1)* [ %start, %entry ], [ %p.next, %body ]
  %k = phi i64 [ %steps, %entry ], [ %k.next, %body ]
  %p.next = getelementptr inbounds i8, i8 addrspace(1)* %p, i64 8
  %k.next = sub i64 %k, 1
  %stop = icmp eq i64 %k.next, 0
  br i1 %stop, label %out, label %body

out:
  %res = phi i8 addrspace(1)* [ %start, %entry ], [ %p.next, %body ]
  ret i8 addrspace(1)* %res
}
