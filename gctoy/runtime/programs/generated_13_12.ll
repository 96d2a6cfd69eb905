declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @do_safepoint()
declare void @gc_collect()
declare void @print_i64(i64)

define i8 addrspace(1)* @h0_mklist(i64 %n, i64 %s) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %head = phi i8 addrspace(1)* [null, %entry], [%node, %loop]
  %node = call i8 addrspace(1)* @gc_alloc(i64 2, i64 2)
  %t1 = mul i64 %s, %i
  %t2 = add i64 %t1, 224
  %fb3 = getelementptr i8, i8 addrspace(1)* %node, i64 8
  %fp4 = bitcast i8 addrspace(1)* %fb3 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %fp4
  %fb5 = getelementptr i8, i8 addrspace(1)* %node, i64 0
  %fi6 = bitcast i8 addrspace(1)* %fb5 to i64 addrspace(1)*
  store i64 %t2, i64 addrspace(1)* %fi6
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %out
out:
  ret i8 addrspace(1)* %node
}

define i64 @h1_sumlist(i8 addrspace(1)* %l) gc "statepoint-example" {
entry:
  %empty = icmp eq i8 addrspace(1)* %l, null
  br i1 %empty, label %done, label %loop
loop:
  %p = phi i8 addrspace(1)* [%l, %entry], [%nx, %loop]
  %h = phi i64 [64, %entry], [%h2, %loop]
  %fb1 = getelementptr i8, i8 addrspace(1)* %p, i64 0
  %fi2 = bitcast i8 addrspace(1)* %fb1 to i64 addrspace(1)*
  %ld3 = load i64, i64 addrspace(1)* %fi2
  call void @do_safepoint()
  %fb4 = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %fp5 = bitcast i8 addrspace(1)* %fb4 to i8 addrspace(1)* addrspace(1)*
  %nx = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp5
  %mx6 = mul i64 %h, 750179
  %cs7 = xor i64 %mx6, %ld3
  %h2 = add i64 %cs7, 0
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %done, label %loop
done:
  %r = phi i64 [64, %entry], [%h2, %loop]
  ret i64 %r
}

define void @h2_bumplist(i8 addrspace(1)* %l, i64 %delta) gc "statepoint-example" {
entry:
  %empty = icmp eq i8 addrspace(1)* %l, null
  br i1 %empty, label %done, label %loop
loop:
  %p = phi i8 addrspace(1)* [%l, %entry], [%nx, %loop]
  %i = phi i64 [1, %entry], [%i1, %loop]
  %fb1 = getelementptr i8, i8 addrspace(1)* %p, i64 0
  %fi2 = bitcast i8 addrspace(1)* %fb1 to i64 addrspace(1)*
  call void @do_safepoint()
  %t3 = load i64, i64 addrspace(1)* %fi2
  %t4 = mul i64 %delta, %i
  %t5 = add i64 %t3, %t4
  store i64 %t5, i64 addrspace(1)* %fi2
  %fb6 = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %fp7 = bitcast i8 addrspace(1)* %fb6 to i8 addrspace(1)* addrspace(1)*
  %lp8 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp7
  %nx = bitcast i8 addrspace(1)* %lp8 to i8 addrspace(1)*
  %i1 = add i64 %i, 1
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %done, label %loop
done:
  ret void
}

define i8 addrspace(1)* @h3_mktree(i64 %d, i64 %v) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %mk, label %inner
inner:
  %d1 = sub i64 %d, 1
  %va = add i64 %v, 13
  %vb = mul i64 %v, 25
  %l = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %va)
  %r = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %vb)
  %new1 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %op2 = bitcast i8 addrspace(1)* %new1 to i8 addrspace(1)* addrspace(1)*
  %fp3 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op2, i64 0
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %fp3
  %op4 = bitcast i8 addrspace(1)* %new1 to i8 addrspace(1)* addrspace(1)*
  %fp5 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op4, i64 1
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %fp5
  %oi6 = bitcast i8 addrspace(1)* %new1 to i64 addrspace(1)*
  %fi7 = getelementptr i64, i64 addrspace(1)* %oi6, i64 2
  store i64 %v, i64 addrspace(1)* %fi7
  ret i8 addrspace(1)* %new1
mk:
  %new8 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %oi9 = bitcast i8 addrspace(1)* %new8 to i64 addrspace(1)*
  %fi10 = getelementptr i64, i64 addrspace(1)* %oi9, i64 2
  store i64 %v, i64 addrspace(1)* %fi10
  ret i8 addrspace(1)* %new8
}

define i64 @h4_sumtree(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %t, null
  br i1 %isnull, label %zero, label %node
zero:
  ret i64 954
node:
  %fb1 = getelementptr i8, i8 addrspace(1)* %t, i64 0
  %fp2 = bitcast i8 addrspace(1)* %fb1 to i8 addrspace(1)* addrspace(1)*
  %lp3 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp2
  %t4 = call i64 @h4_sumtree(i8 addrspace(1)* %lp3)
  %fb5 = getelementptr i8, i8 addrspace(1)* %t, i64 8
  %fp6 = bitcast i8 addrspace(1)* %fb5 to i8 addrspace(1)* addrspace(1)*
  %lp7 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp6
  %t8 = call i64 @h4_sumtree(i8 addrspace(1)* %lp7)
  %oi9 = bitcast i8 addrspace(1)* %t to i64 addrspace(1)*
  %fi10 = getelementptr i64, i64 addrspace(1)* %oi9, i64 2
  %ld11 = load i64, i64 addrspace(1)* %fi10
  %mx12 = mul i64 %t4, 508605
  %cs13 = xor i64 %mx12, %t8
  %mx14 = mul i64 %cs13, 999945
  %cs15 = add i64 %mx14, %ld11
  ret i64 %cs15
}

define i8 addrspace(1)* @h5_mkarray(i64 %n, i64 %s) gc "statepoint-example" {
entry:
  %sh = shl i64 1, %n
  %mask = sub i64 %sh, 1
  %arr = call i8 addrspace(1)* @gc_alloc(i64 %n, i64 %mask)
  %arrp = bitcast i8 addrspace(1)* %arr to i8 addrspace(1)* addrspace(1)*
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %arrp, i64 %i
  %new1 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %t2 = mul i64 %i, %i
  %t3 = add i64 %t2, %s
  %fb4 = getelementptr i8, i8 addrspace(1)* %new1, i64 0
  %fi5 = bitcast i8 addrspace(1)* %fb4 to i64 addrspace(1)*
  store i64 %t3, i64 addrspace(1)* %fi5
  %oi6 = bitcast i8 addrspace(1)* %new1 to i64 addrspace(1)*
  %fi7 = getelementptr i64, i64 addrspace(1)* %oi6, i64 1
  store i64 %i, i64 addrspace(1)* %fi7
  store i8 addrspace(1)* %new1, i8 addrspace(1)* addrspace(1)* %slot
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %out
out:
  ret i8 addrspace(1)* %arr
}

define i64 @h6_sumarray(i8 addrspace(1)* %arr, i64 %n) gc "statepoint-example" {
entry:
  %arrp = bitcast i8 addrspace(1)* %arr to i8 addrspace(1)* addrspace(1)*
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %h = phi i64 [7, %entry], [%h2, %loop]
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %arrp, i64 %i
  %box = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %oi1 = bitcast i8 addrspace(1)* %box to i64 addrspace(1)*
  %fi2 = getelementptr i64, i64 addrspace(1)* %oi1, i64 0
  %ld3 = load i64, i64 addrspace(1)* %fi2
  %fb4 = getelementptr i8, i8 addrspace(1)* %box, i64 8
  %fi5 = bitcast i8 addrspace(1)* %fb4 to i64 addrspace(1)*
  %ld6 = load i64, i64 addrspace(1)* %fi5
  %mx7 = mul i64 %h, 422475
  %cs8 = add i64 %mx7, %ld3
  %mx9 = mul i64 %cs8, 31
  %cs10 = add i64 %mx9, %ld6
  %h2 = add i64 %cs10, 0
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %out
out:
  ret i64 %h2
}

define i8 addrspace(1)* @h7_pair(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %tag) gc "statepoint-example" {
entry:
  %new1 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 6)
  call void @do_safepoint()
  %op2 = bitcast i8 addrspace(1)* %new1 to i8 addrspace(1)* addrspace(1)*
  %fp3 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op2, i64 1
  store i8 addrspace(1)* %a, i8 addrspace(1)* addrspace(1)* %fp3
  %oi4 = bitcast i8 addrspace(1)* %new1 to i64 addrspace(1)*
  %fi5 = getelementptr i64, i64 addrspace(1)* %oi4, i64 0
  store i64 %tag, i64 addrspace(1)* %fi5
  %fb6 = getelementptr i8, i8 addrspace(1)* %new1, i64 16
  %fp7 = bitcast i8 addrspace(1)* %fb6 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %b, i8 addrspace(1)* addrspace(1)* %fp7
  ret i8 addrspace(1)* %new1
}

define i64 @main() gc "statepoint-example" {
entry:
  %obj1 = call i8 addrspace(1)* @h3_mktree(i64 0, i64 24)
  %obj2 = call i8 addrspace(1)* @h5_mkarray(i64 8, i64 134)
  %obj3 = call i8 addrspace(1)* @h7_pair(i8 addrspace(1)* %obj1, i8 addrspace(1)* %obj2, i64 745561980)
  %new4 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb5 = getelementptr i8, i8 addrspace(1)* %new4, i64 0
  %fi6 = bitcast i8 addrspace(1)* %fb5 to i64 addrspace(1)*
  store i64 138, i64 addrspace(1)* %fi6
  %new7 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb8 = getelementptr i8, i8 addrspace(1)* %new7, i64 0
  %fi9 = bitcast i8 addrspace(1)* %fb8 to i64 addrspace(1)*
  store i64 1534, i64 addrspace(1)* %fi9
  %t10 = and i64 745561980, 32
  %t11 = icmp eq i64 %t10, 0
  %sel12 = select i1 %t11, i8 addrspace(1)* %new4, i8 addrspace(1)* %new7
  call void @do_safepoint()
  %fb13 = getelementptr i8, i8 addrspace(1)* %sel12, i64 0
  %fi14 = bitcast i8 addrspace(1)* %fb13 to i64 addrspace(1)*
  %ld15 = load i64, i64 addrspace(1)* %fi14
  %mx16 = mul i64 745561980, 686227
  %cs17 = add i64 %mx16, %ld15
  %obj18 = call i8 addrspace(1)* @h0_mklist(i64 11, i64 -19)
  %new19 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %oi20 = bitcast i8 addrspace(1)* %new19 to i64 addrspace(1)*
  %fi21 = getelementptr i64, i64 addrspace(1)* %oi20, i64 0
  store i64 41, i64 addrspace(1)* %fi21
  %new22 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %oi23 = bitcast i8 addrspace(1)* %new22 to i64 addrspace(1)*
  %fi24 = getelementptr i64, i64 addrspace(1)* %oi23, i64 0
  store i64 %cs17, i64 addrspace(1)* %fi24
  %fb25 = getelementptr i8, i8 addrspace(1)* %new22, i64 0
  %fi26 = bitcast i8 addrspace(1)* %fb25 to i64 addrspace(1)*
  br label %loop27
loop27:
  %i29 = phi i64 [0, %entry], [%i30, %loop27]
  %a31 = phi i8 addrspace(1)* [%new19, %entry], [%b32, %loop27]
  %b32 = phi i8 addrspace(1)* [%new22, %entry], [%c33, %loop27]
  %dp34 = phi i64 addrspace(1)* [%fi26, %entry], [%dn37, %loop27]
  %h35 = phi i64 [%cs17, %entry], [%h36, %loop27]
  %fb38 = getelementptr i8, i8 addrspace(1)* %a31, i64 0
  %fi39 = bitcast i8 addrspace(1)* %fb38 to i64 addrspace(1)*
  %ld40 = load i64, i64 addrspace(1)* %fi39
  %c33 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %t41 = load i64, i64 addrspace(1)* %dp34
  %t42 = add i64 %ld40, %i29
  %t43 = add i64 %t42, %t41
  %fb44 = getelementptr i8, i8 addrspace(1)* %c33, i64 0
  %fi45 = bitcast i8 addrspace(1)* %fb44 to i64 addrspace(1)*
  store i64 %t43, i64 addrspace(1)* %fi45
  %t46 = bitcast i8 addrspace(1)* %c33 to i64 addrspace(1)*
  %dn37 = getelementptr i64, i64 addrspace(1)* %t46, i64 0
  %mx47 = mul i64 %h35, 31
  %cs48 = add i64 %mx47, %t43
  %h36 = add i64 %cs48, 0
  %i30 = add i64 %i29, 1
  %t49 = icmp slt i64 %i30, 8
  br i1 %t49, label %loop27, label %after28
after28:
  call void @gc_collect()
  %mx50 = mul i64 %cs17, 173213
  %cs51 = add i64 %mx50, %h36
  %fb52 = getelementptr i8, i8 addrspace(1)* %a31, i64 0
  %fi53 = bitcast i8 addrspace(1)* %fb52 to i64 addrspace(1)*
  %ld54 = load i64, i64 addrspace(1)* %fi53
  %mx55 = mul i64 %cs51, 715951
  %cs56 = add i64 %mx55, %ld54
  %fb57 = getelementptr i8, i8 addrspace(1)* %c33, i64 0
  %fi58 = bitcast i8 addrspace(1)* %fb57 to i64 addrspace(1)*
  %ld59 = load i64, i64 addrspace(1)* %fi58
  %mx60 = mul i64 %cs56, 232423
  %cs61 = add i64 %mx60, %ld59
  %sum62 = call i64 @h4_sumtree(i8 addrspace(1)* %obj1)
  %mx63 = mul i64 %cs61, 437115
  %cs64 = add i64 %mx63, %sum62
  %new65 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb66 = getelementptr i8, i8 addrspace(1)* %new65, i64 0
  %fi67 = bitcast i8 addrspace(1)* %fb66 to i64 addrspace(1)*
  store i64 821, i64 addrspace(1)* %fi67
  %new68 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb69 = getelementptr i8, i8 addrspace(1)* %new68, i64 0
  %fi70 = bitcast i8 addrspace(1)* %fb69 to i64 addrspace(1)*
  store i64 1577, i64 addrspace(1)* %fi70
  %t71 = and i64 %cs64, 32
  %t72 = icmp eq i64 %t71, 0
  %sel73 = select i1 %t72, i8 addrspace(1)* %new65, i8 addrspace(1)* %new68
  call void @gc_collect()
  %fb74 = getelementptr i8, i8 addrspace(1)* %sel73, i64 0
  %fi75 = bitcast i8 addrspace(1)* %fb74 to i64 addrspace(1)*
  %ld76 = load i64, i64 addrspace(1)* %fi75
  %mx77 = mul i64 %cs64, 82107
  %cs78 = add i64 %mx77, %ld76
  %fb79 = getelementptr i8, i8 addrspace(1)* %obj2, i64 48
  %fp80 = bitcast i8 addrspace(1)* %fb79 to i8 addrspace(1)* addrspace(1)*
  %new81 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  call void @gc_collect()
  %t82 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp80
  call void @do_safepoint()
  %oi83 = bitcast i8 addrspace(1)* %t82 to i64 addrspace(1)*
  %fi84 = getelementptr i64, i64 addrspace(1)* %oi83, i64 0
  %ld85 = load i64, i64 addrspace(1)* %fi84
  %mx86 = mul i64 %cs78, 427415
  %cs87 = add i64 %mx86, %ld85
  %new88 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %fb89 = getelementptr i8, i8 addrspace(1)* %new88, i64 0
  %fi90 = bitcast i8 addrspace(1)* %fb89 to i64 addrspace(1)*
  store i64 %cs87, i64 addrspace(1)* %fi90
  %oi91 = bitcast i8 addrspace(1)* %new88 to i64 addrspace(1)*
  %fi92 = getelementptr i64, i64 addrspace(1)* %oi91, i64 1
  store i64 6, i64 addrspace(1)* %fi92
  store i8 addrspace(1)* %new88, i8 addrspace(1)* addrspace(1)* %fp80
  %obj93 = call i8 addrspace(1)* @h3_mktree(i64 1, i64 77)
  %obj94 = call i8 addrspace(1)* @h5_mkarray(i64 7, i64 303)
  %new95 = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  %fb96 = getelementptr i8, i8 addrspace(1)* %new95, i64 0
  %fi97 = bitcast i8 addrspace(1)* %fb96 to i64 addrspace(1)*
  store i64 -818, i64 addrspace(1)* %fi97
  %oi98 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi99 = getelementptr i64, i64 addrspace(1)* %oi98, i64 1
  store i64 345, i64 addrspace(1)* %fi99
  %oi100 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi101 = getelementptr i64, i64 addrspace(1)* %oi100, i64 2
  store i64 -625, i64 addrspace(1)* %fi101
  %fb102 = getelementptr i8, i8 addrspace(1)* %new95, i64 24
  %fi103 = bitcast i8 addrspace(1)* %fb102 to i64 addrspace(1)*
  store i64 -542, i64 addrspace(1)* %fi103
  %oi104 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi105 = getelementptr i64, i64 addrspace(1)* %oi104, i64 3
  store i64 %cs87, i64 addrspace(1)* %fi105
  %new106 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  call void @gc_collect()
  %t107 = load i64, i64 addrspace(1)* %fi105
  %mx108 = mul i64 %cs87, 311913
  %cs109 = add i64 %mx108, %t107
  store i64 %cs109, i64 addrspace(1)* %fi105
  %oi110 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi111 = getelementptr i64, i64 addrspace(1)* %oi110, i64 0
  %ld112 = load i64, i64 addrspace(1)* %fi111
  %mx113 = mul i64 0, 17
  %cs114 = xor i64 %mx113, %ld112
  %oi115 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi116 = getelementptr i64, i64 addrspace(1)* %oi115, i64 1
  %ld117 = load i64, i64 addrspace(1)* %fi116
  %mx118 = mul i64 %cs114, 17
  %cs119 = add i64 %mx118, %ld117
  %fb120 = getelementptr i8, i8 addrspace(1)* %new95, i64 16
  %fi121 = bitcast i8 addrspace(1)* %fb120 to i64 addrspace(1)*
  %ld122 = load i64, i64 addrspace(1)* %fi121
  %mx123 = mul i64 %cs119, 17
  %cs124 = add i64 %mx123, %ld122
  %oi125 = bitcast i8 addrspace(1)* %new95 to i64 addrspace(1)*
  %fi126 = getelementptr i64, i64 addrspace(1)* %oi125, i64 3
  %ld127 = load i64, i64 addrspace(1)* %fi126
  %mx128 = mul i64 %cs124, 17
  %cs129 = add i64 %mx128, %ld127
  %mx130 = mul i64 %cs109, 104609
  %cs131 = add i64 %mx130, %cs129
  %sum132 = call i64 @h4_sumtree(i8 addrspace(1)* %obj1)
  %mx133 = mul i64 %cs131, 533161
  %cs134 = add i64 %mx133, %sum132
  %fb135 = getelementptr i8, i8 addrspace(1)* %obj3, i64 0
  %fi136 = bitcast i8 addrspace(1)* %fb135 to i64 addrspace(1)*
  %ld137 = load i64, i64 addrspace(1)* %fi136
  %fb138 = getelementptr i8, i8 addrspace(1)* %obj3, i64 8
  %fp139 = bitcast i8 addrspace(1)* %fb138 to i8 addrspace(1)* addrspace(1)*
  %lp140 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp139
  %sum141 = call i64 @h4_sumtree(i8 addrspace(1)* %lp140)
  %fb142 = getelementptr i8, i8 addrspace(1)* %obj3, i64 16
  %fp143 = bitcast i8 addrspace(1)* %fb142 to i8 addrspace(1)* addrspace(1)*
  %lp144 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp143
  %sum145 = call i64 @h6_sumarray(i8 addrspace(1)* %lp144, i64 8)
  %mx146 = mul i64 %ld137, 101
  %cs147 = xor i64 %mx146, %sum141
  %mx148 = mul i64 %cs147, 103
  %cs149 = add i64 %mx148, %sum145
  %mx150 = mul i64 %cs134, 1021397
  %cs151 = xor i64 %mx150, %cs149
  %sum152 = call i64 @h4_sumtree(i8 addrspace(1)* %obj93)
  %mx153 = mul i64 %cs151, 805553
  %cs154 = add i64 %mx153, %sum152
  %sum155 = call i64 @h6_sumarray(i8 addrspace(1)* %obj94, i64 7)
  %mx156 = mul i64 %cs154, 728401
  %cs157 = add i64 %mx156, %sum155
  call void @print_i64(i64 %cs157)
  ret i64 %cs157
}
