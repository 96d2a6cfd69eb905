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
  %t2 = add i64 %t1, 131
  %op3 = bitcast i8 addrspace(1)* %node to i8 addrspace(1)* addrspace(1)*
  %fp4 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op3, i64 1
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
  %h = phi i64 [90, %entry], [%h2, %loop]
  %fb1 = getelementptr i8, i8 addrspace(1)* %p, i64 0
  %fi2 = bitcast i8 addrspace(1)* %fb1 to i64 addrspace(1)*
  %ld3 = load i64, i64 addrspace(1)* %fi2
  %fb4 = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %fp5 = bitcast i8 addrspace(1)* %fb4 to i8 addrspace(1)* addrspace(1)*
  %nx = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp5
  %mx6 = mul i64 %h, 850383
  %cs7 = add i64 %mx6, %ld3
  %h2 = add i64 %cs7, 0
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %done, label %loop
done:
  %r = phi i64 [90, %entry], [%h2, %loop]
  ret i64 %r
}

define void @h2_bumplist(i8 addrspace(1)* %l, i64 %delta) gc "statepoint-example" {
entry:
  %empty = icmp eq i8 addrspace(1)* %l, null
  br i1 %empty, label %done, label %loop
loop:
  %p = phi i8 addrspace(1)* [%l, %entry], [%nx, %loop]
  %i = phi i64 [1, %entry], [%i1, %loop]
  %oi1 = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %fi2 = getelementptr i64, i64 addrspace(1)* %oi1, i64 0
  call void @do_safepoint()
  %t3 = load i64, i64 addrspace(1)* %fi2
  %t4 = mul i64 %delta, %i
  %t5 = add i64 %t3, %t4
  store i64 %t5, i64 addrspace(1)* %fi2
  %op6 = bitcast i8 addrspace(1)* %p to i8 addrspace(1)* addrspace(1)*
  %fp7 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op6, i64 1
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
  %va = add i64 %v, 29
  %vb = mul i64 %v, 6
  %l = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %va)
  %r = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %vb)
  %new1 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %fb2 = getelementptr i8, i8 addrspace(1)* %new1, i64 0
  %fp3 = bitcast i8 addrspace(1)* %fb2 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %fp3
  %fb4 = getelementptr i8, i8 addrspace(1)* %new1, i64 8
  %fp5 = bitcast i8 addrspace(1)* %fb4 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %fp5
  %fb6 = getelementptr i8, i8 addrspace(1)* %new1, i64 16
  %fi7 = bitcast i8 addrspace(1)* %fb6 to i64 addrspace(1)*
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
  ret i64 943
node:
  call void @do_safepoint()
  %fb1 = getelementptr i8, i8 addrspace(1)* %t, i64 0
  %fp2 = bitcast i8 addrspace(1)* %fb1 to i8 addrspace(1)* addrspace(1)*
  %lp3 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp2
  %t4 = call i64 @h4_sumtree(i8 addrspace(1)* %lp3)
  %fb5 = getelementptr i8, i8 addrspace(1)* %t, i64 8
  %fp6 = bitcast i8 addrspace(1)* %fb5 to i8 addrspace(1)* addrspace(1)*
  %lp7 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp6
  %t8 = call i64 @h4_sumtree(i8 addrspace(1)* %lp7)
  %fb9 = getelementptr i8, i8 addrspace(1)* %t, i64 16
  %fi10 = bitcast i8 addrspace(1)* %fb9 to i64 addrspace(1)*
  %ld11 = load i64, i64 addrspace(1)* %fi10
  %mx12 = mul i64 %t4, 727423
  %cs13 = add i64 %mx12, %t8
  %mx14 = mul i64 %cs13, 713829
  %cs15 = xor i64 %mx14, %ld11
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
  %oi4 = bitcast i8 addrspace(1)* %new1 to i64 addrspace(1)*
  %fi5 = getelementptr i64, i64 addrspace(1)* %oi4, i64 0
  store i64 %t3, i64 addrspace(1)* %fi5
  %fb6 = getelementptr i8, i8 addrspace(1)* %new1, i64 8
  %fi7 = bitcast i8 addrspace(1)* %fb6 to i64 addrspace(1)*
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
  call void @do_safepoint()
  %box = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %fb1 = getelementptr i8, i8 addrspace(1)* %box, i64 0
  %fi2 = bitcast i8 addrspace(1)* %fb1 to i64 addrspace(1)*
  %ld3 = load i64, i64 addrspace(1)* %fi2
  %fb4 = getelementptr i8, i8 addrspace(1)* %box, i64 8
  %fi5 = bitcast i8 addrspace(1)* %fb4 to i64 addrspace(1)*
  %ld6 = load i64, i64 addrspace(1)* %fi5
  %mx7 = mul i64 %h, 409615
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
  %fb2 = getelementptr i8, i8 addrspace(1)* %new1, i64 8
  %fp3 = bitcast i8 addrspace(1)* %fb2 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %a, i8 addrspace(1)* addrspace(1)* %fp3
  %oi4 = bitcast i8 addrspace(1)* %new1 to i64 addrspace(1)*
  %fi5 = getelementptr i64, i64 addrspace(1)* %oi4, i64 0
  store i64 %tag, i64 addrspace(1)* %fi5
  %op6 = bitcast i8 addrspace(1)* %new1 to i8 addrspace(1)* addrspace(1)*
  %fp7 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op6, i64 2
  store i8 addrspace(1)* %b, i8 addrspace(1)* addrspace(1)* %fp7
  ret i8 addrspace(1)* %new1
}

define i64 @main() gc "statepoint-example" {
entry:
  %t1 = and i64 139821566, 2
  %t2 = icmp ne i64 %t1, 0
  br i1 %t2, label %left3, label %right4
left3:
  %new6 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %fb7 = getelementptr i8, i8 addrspace(1)* %new6, i64 0
  %fi8 = bitcast i8 addrspace(1)* %fb7 to i64 addrspace(1)*
  store i64 844, i64 addrspace(1)* %fi8
  %oi9 = bitcast i8 addrspace(1)* %new6 to i64 addrspace(1)*
  %fi10 = getelementptr i64, i64 addrspace(1)* %oi9, i64 1
  store i64 139821566, i64 addrspace(1)* %fi10
  br label %join5
right4:
  %new11 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 0)
  %fb12 = getelementptr i8, i8 addrspace(1)* %new11, i64 0
  %fi13 = bitcast i8 addrspace(1)* %fb12 to i64 addrspace(1)*
  store i64 761, i64 addrspace(1)* %fi13
  %fb14 = getelementptr i8, i8 addrspace(1)* %new11, i64 8
  %fi15 = bitcast i8 addrspace(1)* %fb14 to i64 addrspace(1)*
  store i64 711, i64 addrspace(1)* %fi15
  br label %join5
join5:
  %m16 = phi i8 addrspace(1)* [%new6, %left3], [%new11, %right4]
  call void @gc_collect()
  %oi17 = bitcast i8 addrspace(1)* %m16 to i64 addrspace(1)*
  %fi18 = getelementptr i64, i64 addrspace(1)* %oi17, i64 0
  %ld19 = load i64, i64 addrspace(1)* %fi18
  %mx20 = mul i64 139821566, 67925
  %cs21 = xor i64 %mx20, %ld19
  %fb22 = getelementptr i8, i8 addrspace(1)* %m16, i64 8
  %fi23 = bitcast i8 addrspace(1)* %fb22 to i64 addrspace(1)*
  %ld24 = load i64, i64 addrspace(1)* %fi23
  %mx25 = mul i64 %cs21, 497013
  %cs26 = xor i64 %mx25, %ld24
  %obj27 = call i8 addrspace(1)* @h5_mkarray(i64 8, i64 873)
  %obj28 = call i8 addrspace(1)* @h0_mklist(i64 7, i64 23)
  %obj29 = call i8 addrspace(1)* @h7_pair(i8 addrspace(1)* %obj27, i8 addrspace(1)* %obj28, i64 %cs26)
  %t30 = and i64 %cs26, 2
  %t31 = icmp ne i64 %t30, 0
  br i1 %t31, label %left32, label %right33
left32:
  %new35 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %fb36 = getelementptr i8, i8 addrspace(1)* %new35, i64 0
  %fi37 = bitcast i8 addrspace(1)* %fb36 to i64 addrspace(1)*
  store i64 140, i64 addrspace(1)* %fi37
  %fb38 = getelementptr i8, i8 addrspace(1)* %new35, i64 8
  %fi39 = bitcast i8 addrspace(1)* %fb38 to i64 addrspace(1)*
  store i64 %cs26, i64 addrspace(1)* %fi39
  br label %join34
right33:
  %new40 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 0)
  %fb41 = getelementptr i8, i8 addrspace(1)* %new40, i64 0
  %fi42 = bitcast i8 addrspace(1)* %fb41 to i64 addrspace(1)*
  store i64 527, i64 addrspace(1)* %fi42
  %oi43 = bitcast i8 addrspace(1)* %new40 to i64 addrspace(1)*
  %fi44 = getelementptr i64, i64 addrspace(1)* %oi43, i64 1
  store i64 341, i64 addrspace(1)* %fi44
  br label %join34
join34:
  %m45 = phi i8 addrspace(1)* [%new35, %left32], [%new40, %right33]
  call void @gc_collect()
  %fb46 = getelementptr i8, i8 addrspace(1)* %m45, i64 0
  %fi47 = bitcast i8 addrspace(1)* %fb46 to i64 addrspace(1)*
  %ld48 = load i64, i64 addrspace(1)* %fi47
  %mx49 = mul i64 %cs26, 298609
  %cs50 = add i64 %mx49, %ld48
  %fb51 = getelementptr i8, i8 addrspace(1)* %m45, i64 8
  %fi52 = bitcast i8 addrspace(1)* %fb51 to i64 addrspace(1)*
  %ld53 = load i64, i64 addrspace(1)* %fi52
  %mx54 = mul i64 %cs50, 183031
  %cs55 = xor i64 %mx54, %ld53
  %obj56 = call i8 addrspace(1)* @h5_mkarray(i64 5, i64 700)
  %obj57 = call i8 addrspace(1)* @h7_pair(i8 addrspace(1)* %obj29, i8 addrspace(1)* %m45, i64 %cs55)
  %new58 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb59 = getelementptr i8, i8 addrspace(1)* %new58, i64 0
  %fi60 = bitcast i8 addrspace(1)* %fb59 to i64 addrspace(1)*
  store i64 243, i64 addrspace(1)* %fi60
  %new61 = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %fb62 = getelementptr i8, i8 addrspace(1)* %new61, i64 0
  %fi63 = bitcast i8 addrspace(1)* %fb62 to i64 addrspace(1)*
  store i64 1841, i64 addrspace(1)* %fi63
  %t64 = and i64 %cs55, 4
  %t65 = icmp eq i64 %t64, 0
  %sel66 = select i1 %t65, i8 addrspace(1)* %new58, i8 addrspace(1)* %new61
  call void @do_safepoint()
  %fb67 = getelementptr i8, i8 addrspace(1)* %sel66, i64 0
  %fi68 = bitcast i8 addrspace(1)* %fb67 to i64 addrspace(1)*
  %ld69 = load i64, i64 addrspace(1)* %fi68
  %mx70 = mul i64 %cs55, 783073
  %cs71 = add i64 %mx70, %ld69
  %obj72 = call i8 addrspace(1)* @h5_mkarray(i64 7, i64 660)
  %obj73 = call i8 addrspace(1)* @h0_mklist(i64 2, i64 -15)
  %new74 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %fb75 = getelementptr i8, i8 addrspace(1)* %new74, i64 0
  %fi76 = bitcast i8 addrspace(1)* %fb75 to i64 addrspace(1)*
  store i64 1, i64 addrspace(1)* %fi76
  %new77 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %oi78 = bitcast i8 addrspace(1)* %new77 to i64 addrspace(1)*
  %fi79 = getelementptr i64, i64 addrspace(1)* %oi78, i64 0
  store i64 %cs71, i64 addrspace(1)* %fi79
  %oi80 = bitcast i8 addrspace(1)* %new77 to i64 addrspace(1)*
  %fi81 = getelementptr i64, i64 addrspace(1)* %oi80, i64 0
  br label %loop82
loop82:
  %i84 = phi i64 [0, %join34], [%i85, %loop82]
  %a86 = phi i8 addrspace(1)* [%new74, %join34], [%b87, %loop82]
  %b87 = phi i8 addrspace(1)* [%new77, %join34], [%c88, %loop82]
  %dp89 = phi i64 addrspace(1)* [%fi81, %join34], [%dn92, %loop82]
  %h90 = phi i64 [%cs71, %join34], [%h91, %loop82]
  %oi93 = bitcast i8 addrspace(1)* %a86 to i64 addrspace(1)*
  %fi94 = getelementptr i64, i64 addrspace(1)* %oi93, i64 0
  %ld95 = load i64, i64 addrspace(1)* %fi94
  %c88 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %t96 = load i64, i64 addrspace(1)* %dp89
  %t97 = add i64 %ld95, %i84
  %t98 = add i64 %t97, %t96
  %fb99 = getelementptr i8, i8 addrspace(1)* %c88, i64 0
  %fi100 = bitcast i8 addrspace(1)* %fb99 to i64 addrspace(1)*
  store i64 %t98, i64 addrspace(1)* %fi100
  %t101 = bitcast i8 addrspace(1)* %c88 to i64 addrspace(1)*
  %dn92 = getelementptr i64, i64 addrspace(1)* %t101, i64 0
  %mx102 = mul i64 %h90, 31
  %cs103 = add i64 %mx102, %t98
  %h91 = add i64 %cs103, 0
  %i85 = add i64 %i84, 1
  %t104 = icmp slt i64 %i85, 8
  br i1 %t104, label %loop82, label %after83
after83:
  call void @gc_collect()
  %mx105 = mul i64 %cs71, 299213
  %cs106 = add i64 %mx105, %h91
  %fb107 = getelementptr i8, i8 addrspace(1)* %a86, i64 0
  %fi108 = bitcast i8 addrspace(1)* %fb107 to i64 addrspace(1)*
  %ld109 = load i64, i64 addrspace(1)* %fi108
  %mx110 = mul i64 %cs106, 34053
  %cs111 = add i64 %mx110, %ld109
  %oi112 = bitcast i8 addrspace(1)* %c88 to i64 addrspace(1)*
  %fi113 = getelementptr i64, i64 addrspace(1)* %oi112, i64 0
  %ld114 = load i64, i64 addrspace(1)* %fi113
  %mx115 = mul i64 %cs111, 1025209
  %cs116 = add i64 %mx115, %ld114
  %obj117 = call i8 addrspace(1)* @h5_mkarray(i64 1, i64 952)
  %fb118 = getelementptr i8, i8 addrspace(1)* %obj29, i64 0
  %fi119 = bitcast i8 addrspace(1)* %fb118 to i64 addrspace(1)*
  %ld120 = load i64, i64 addrspace(1)* %fi119
  %fb121 = getelementptr i8, i8 addrspace(1)* %obj29, i64 8
  %fp122 = bitcast i8 addrspace(1)* %fb121 to i8 addrspace(1)* addrspace(1)*
  %lp123 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp122
  %sum124 = call i64 @h6_sumarray(i8 addrspace(1)* %lp123, i64 8)
  %op125 = bitcast i8 addrspace(1)* %obj29 to i8 addrspace(1)* addrspace(1)*
  %fp126 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op125, i64 2
  %lp127 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp126
  %sum128 = call i64 @h1_sumlist(i8 addrspace(1)* %lp127)
  %mx129 = mul i64 %ld120, 101
  %cs130 = add i64 %mx129, %sum124
  %mx131 = mul i64 %cs130, 103
  %cs132 = add i64 %mx131, %sum128
  %mx133 = mul i64 %cs116, 1043379
  %cs134 = add i64 %mx133, %cs132
  %oi135 = bitcast i8 addrspace(1)* %obj57 to i64 addrspace(1)*
  %fi136 = getelementptr i64, i64 addrspace(1)* %oi135, i64 0
  %ld137 = load i64, i64 addrspace(1)* %fi136
  %op138 = bitcast i8 addrspace(1)* %obj57 to i8 addrspace(1)* addrspace(1)*
  %fp139 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op138, i64 1
  %lp140 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp139
  %oi141 = bitcast i8 addrspace(1)* %lp140 to i64 addrspace(1)*
  %fi142 = getelementptr i64, i64 addrspace(1)* %oi141, i64 0
  %ld143 = load i64, i64 addrspace(1)* %fi142
  %op144 = bitcast i8 addrspace(1)* %lp140 to i8 addrspace(1)* addrspace(1)*
  %fp145 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op144, i64 1
  %lp146 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp145
  %sum147 = call i64 @h6_sumarray(i8 addrspace(1)* %lp146, i64 8)
  %op148 = bitcast i8 addrspace(1)* %lp140 to i8 addrspace(1)* addrspace(1)*
  %fp149 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op148, i64 2
  %lp150 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp149
  %sum151 = call i64 @h1_sumlist(i8 addrspace(1)* %lp150)
  %mx152 = mul i64 %ld143, 101
  %cs153 = add i64 %mx152, %sum147
  %mx154 = mul i64 %cs153, 103
  %cs155 = add i64 %mx154, %sum151
  %fb156 = getelementptr i8, i8 addrspace(1)* %obj57, i64 16
  %fp157 = bitcast i8 addrspace(1)* %fb156 to i8 addrspace(1)* addrspace(1)*
  %lp158 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp157
  %fb159 = getelementptr i8, i8 addrspace(1)* %lp158, i64 0
  %fi160 = bitcast i8 addrspace(1)* %fb159 to i64 addrspace(1)*
  %ld161 = load i64, i64 addrspace(1)* %fi160
  %mx162 = mul i64 0, 17
  %cs163 = xor i64 %mx162, %ld161
  %fb164 = getelementptr i8, i8 addrspace(1)* %lp158, i64 8
  %fi165 = bitcast i8 addrspace(1)* %fb164 to i64 addrspace(1)*
  %ld166 = load i64, i64 addrspace(1)* %fi165
  %mx167 = mul i64 %cs163, 17
  %cs168 = add i64 %mx167, %ld166
  %mx169 = mul i64 %ld137, 101
  %cs170 = add i64 %mx169, %cs155
  %mx171 = mul i64 %cs170, 103
  %cs172 = add i64 %mx171, %cs168
  %mx173 = mul i64 %cs134, 915185
  %cs174 = add i64 %mx173, %cs172
  %oi175 = bitcast i8 addrspace(1)* %c88 to i64 addrspace(1)*
  %fi176 = getelementptr i64, i64 addrspace(1)* %oi175, i64 0
  %ld177 = load i64, i64 addrspace(1)* %fi176
  %mx178 = mul i64 0, 17
  %cs179 = add i64 %mx178, %ld177
  %mx180 = mul i64 %cs174, 652419
  %cs181 = add i64 %mx180, %cs179
  %sum182 = call i64 @h6_sumarray(i8 addrspace(1)* %obj117, i64 1)
  %mx183 = mul i64 %cs181, 762757
  %cs184 = xor i64 %mx183, %sum182
  call void @print_i64(i64 %cs184)
  ret i64 %cs184
}
