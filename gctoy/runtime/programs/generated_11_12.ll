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
  %op3 = bitcast i8 addrspace(1)* %node to i8 addrspace(1)* addrspace(1)*
  %fp4 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op3, i64 1
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %fp4
  call void @do_safepoint()
  %oi5 = bitcast i8 addrspace(1)* %node to i64 addrspace(1)*
  %fi6 = getelementptr i64, i64 addrspace(1)* %oi5, i64 0
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
  %h = phi i64 [50, %entry], [%h2, %loop]
  %oi1 = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %fi2 = getelementptr i64, i64 addrspace(1)* %oi1, i64 0
  %ld3 = load i64, i64 addrspace(1)* %fi2
  call void @do_safepoint()
  %op4 = bitcast i8 addrspace(1)* %p to i8 addrspace(1)* addrspace(1)*
  %fp5 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op4, i64 1
  %nx = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %fp5
  %mx6 = mul i64 %h, 152029
  %cs7 = add i64 %mx6, %ld3
  %h2 = add i64 %cs7, 0
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %done, label %loop
done:
  %r = phi i64 [50, %entry], [%h2, %loop]
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
  %va = add i64 %v, 12
  %vb = mul i64 %v, 4
  %l = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %va)
  %r = call i8 addrspace(1)* @h3_mktree(i64 %d1, i64 %vb)
  %new1 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %op2 = bitcast i8 addrspace(1)* %new1 to i8 addrspace(1)* addrspace(1)*
  %fp3 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %op2, i64 0
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
  %fb9 = getelementptr i8, i8 addrspace(1)* %new8, i64 16
  %fi10 = bitcast i8 addrspace(1)* %fb9 to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %fi10
  ret i8 addrspace(1)* %new8
}

define i64 @h4_sumtree(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %t, null
  br i1 %isnull, label %zero, label %node
zero:
  ret i64 964
node:
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
  %mx12 = mul i64 %t4, 947177
  %cs13 = add i64 %mx12, %t8
  %mx14 = mul i64 %cs13, 414933
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
  %oi1 = bitcast i8 addrspace(1)* %box to i64 addrspace(1)*
  %fi2 = getelementptr i64, i64 addrspace(1)* %oi1, i64 0
  %ld3 = load i64, i64 addrspace(1)* %fi2
  %oi4 = bitcast i8 addrspace(1)* %box to i64 addrspace(1)*
  %fi5 = getelementptr i64, i64 addrspace(1)* %oi4, i64 1
  %ld6 = load i64, i64 addrspace(1)* %fi5
  %mx7 = mul i64 %h, 335811
  %cs8 = xor i64 %mx7, %ld3
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
  %fb4 = getelementptr i8, i8 addrspace(1)* %new1, i64 0
  %fi5 = bitcast i8 addrspace(1)* %fb4 to i64 addrspace(1)*
  store i64 %tag, i64 addrspace(1)* %fi5
  call void @do_safepoint()
  %fb6 = getelementptr i8, i8 addrspace(1)* %new1, i64 16
  %fp7 = bitcast i8 addrspace(1)* %fb6 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %b, i8 addrspace(1)* addrspace(1)* %fp7
  ret i8 addrspace(1)* %new1
}

define i64 @main() gc "statepoint-example" {
entry:
  %obj1 = call i8 addrspace(1)* @h3_mktree(i64 1, i64 33)
  %obj2 = call i8 addrspace(1)* @h3_mktree(i64 0, i64 68)
  %obj3 = call i8 addrspace(1)* @h5_mkarray(i64 7, i64 274)
  %obj4 = call i8 addrspace(1)* @h5_mkarray(i64 8, i64 838)
  %obj5 = call i8 addrspace(1)* @h0_mklist(i64 7, i64 0)
  %new6 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %fb7 = getelementptr i8, i8 addrspace(1)* %new6, i64 0
  %fi8 = bitcast i8 addrspace(1)* %fb7 to i64 addrspace(1)*
  store i64 73, i64 addrspace(1)* %fi8
  %new9 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %oi10 = bitcast i8 addrspace(1)* %new9 to i64 addrspace(1)*
  %fi11 = getelementptr i64, i64 addrspace(1)* %oi10, i64 0
  store i64 315537539, i64 addrspace(1)* %fi11
  %oi12 = bitcast i8 addrspace(1)* %new9 to i64 addrspace(1)*
  %fi13 = getelementptr i64, i64 addrspace(1)* %oi12, i64 0
  br label %loop14
loop14:
  %i16 = phi i64 [0, %entry], [%i17, %loop14]
  %a18 = phi i8 addrspace(1)* [%new6, %entry], [%b19, %loop14]
  %b19 = phi i8 addrspace(1)* [%new9, %entry], [%c20, %loop14]
  %dp21 = phi i64 addrspace(1)* [%fi13, %entry], [%dn24, %loop14]
  %h22 = phi i64 [315537539, %entry], [%h23, %loop14]
  %fb25 = getelementptr i8, i8 addrspace(1)* %a18, i64 0
  %fi26 = bitcast i8 addrspace(1)* %fb25 to i64 addrspace(1)*
  %ld27 = load i64, i64 addrspace(1)* %fi26
  %c20 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %t28 = load i64, i64 addrspace(1)* %dp21
  %t29 = add i64 %ld27, %i16
  %t30 = add i64 %t29, %t28
  %oi31 = bitcast i8 addrspace(1)* %c20 to i64 addrspace(1)*
  %fi32 = getelementptr i64, i64 addrspace(1)* %oi31, i64 0
  store i64 %t30, i64 addrspace(1)* %fi32
  call void @do_safepoint()
  %t33 = bitcast i8 addrspace(1)* %c20 to i64 addrspace(1)*
  %dn24 = getelementptr i64, i64 addrspace(1)* %t33, i64 0
  %mx34 = mul i64 %h22, 31
  %cs35 = add i64 %mx34, %t30
  %h23 = add i64 %cs35, 0
  %i17 = add i64 %i16, 1
  %t36 = icmp slt i64 %i17, 7
  br i1 %t36, label %loop14, label %after15
after15:
  call void @gc_collect()
  %mx37 = mul i64 315537539, 902805
  %cs38 = add i64 %mx37, %h23
  %oi39 = bitcast i8 addrspace(1)* %a18 to i64 addrspace(1)*
  %fi40 = getelementptr i64, i64 addrspace(1)* %oi39, i64 0
  %ld41 = load i64, i64 addrspace(1)* %fi40
  %mx42 = mul i64 %cs38, 191407
  %cs43 = add i64 %mx42, %ld41
  %fb44 = getelementptr i8, i8 addrspace(1)* %c20, i64 0
  %fi45 = bitcast i8 addrspace(1)* %fb44 to i64 addrspace(1)*
  %ld46 = load i64, i64 addrspace(1)* %fi45
  %mx47 = mul i64 %cs43, 444515
  %cs48 = add i64 %mx47, %ld46
  %sum49 = call i64 @h4_sumtree(i8 addrspace(1)* %obj1)
  %mx50 = mul i64 %cs48, 339989
  %cs51 = add i64 %mx50, %sum49
  call void @print_i64(i64 %cs51)
  %t52 = and i64 %cs51, 4
  %t53 = icmp ne i64 %t52, 0
  br i1 %t53, label %left54, label %right55
left54:
  %new57 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %oi58 = bitcast i8 addrspace(1)* %new57 to i64 addrspace(1)*
  %fi59 = getelementptr i64, i64 addrspace(1)* %oi58, i64 0
  store i64 76, i64 addrspace(1)* %fi59
  %fb60 = getelementptr i8, i8 addrspace(1)* %new57, i64 8
  %fi61 = bitcast i8 addrspace(1)* %fb60 to i64 addrspace(1)*
  store i64 %cs51, i64 addrspace(1)* %fi61
  br label %join56
right55:
  %new62 = call i8 addrspace(1)* @gc_alloc(i64 3, i64 0)
  %fb63 = getelementptr i8, i8 addrspace(1)* %new62, i64 0
  %fi64 = bitcast i8 addrspace(1)* %fb63 to i64 addrspace(1)*
  store i64 368, i64 addrspace(1)* %fi64
  %fb65 = getelementptr i8, i8 addrspace(1)* %new62, i64 8
  %fi66 = bitcast i8 addrspace(1)* %fb65 to i64 addrspace(1)*
  store i64 28, i64 addrspace(1)* %fi66
  br label %join56
join56:
  %m67 = phi i8 addrspace(1)* [%new57, %left54], [%new62, %right55]
  call void @gc_collect()
  %fb68 = getelementptr i8, i8 addrspace(1)* %m67, i64 0
  %fi69 = bitcast i8 addrspace(1)* %fb68 to i64 addrspace(1)*
  %ld70 = load i64, i64 addrspace(1)* %fi69
  %mx71 = mul i64 %cs51, 930593
  %cs72 = add i64 %mx71, %ld70
  %fb73 = getelementptr i8, i8 addrspace(1)* %m67, i64 8
  %fi74 = bitcast i8 addrspace(1)* %fb73 to i64 addrspace(1)*
  %ld75 = load i64, i64 addrspace(1)* %fi74
  %mx76 = mul i64 %cs72, 917171
  %cs77 = add i64 %mx76, %ld75
  call void @gc_collect()
  %obj78 = call i8 addrspace(1)* @h0_mklist(i64 11, i64 -16)
  %oi79 = bitcast i8 addrspace(1)* %m67 to i64 addrspace(1)*
  %fi80 = getelementptr i64, i64 addrspace(1)* %oi79, i64 0
  %ld81 = load i64, i64 addrspace(1)* %fi80
  %mx82 = mul i64 0, 17
  %cs83 = xor i64 %mx82, %ld81
  %fb84 = getelementptr i8, i8 addrspace(1)* %m67, i64 8
  %fi85 = bitcast i8 addrspace(1)* %fb84 to i64 addrspace(1)*
  %ld86 = load i64, i64 addrspace(1)* %fi85
  %mx87 = mul i64 %cs83, 17
  %cs88 = xor i64 %mx87, %ld86
  %mx89 = mul i64 %cs77, 378269
  %cs90 = add i64 %mx89, %cs88
  call void @print_i64(i64 %cs90)
  %obj91 = call i8 addrspace(1)* @h3_mktree(i64 2, i64 72)
  %sum92 = call i64 @h4_sumtree(i8 addrspace(1)* %obj1)
  %mx93 = mul i64 %cs90, 216131
  %cs94 = add i64 %mx93, %sum92
  %sum95 = call i64 @h4_sumtree(i8 addrspace(1)* %obj2)
  %mx96 = mul i64 %cs94, 56741
  %cs97 = add i64 %mx96, %sum95
  %sum98 = call i64 @h1_sumlist(i8 addrspace(1)* %obj5)
  %mx99 = mul i64 %cs97, 243635
  %cs100 = xor i64 %mx99, %sum98
  %sum101 = call i64 @h4_sumtree(i8 addrspace(1)* %obj91)
  %mx102 = mul i64 %cs100, 356093
  %cs103 = add i64 %mx102, %sum101
  call void @print_i64(i64 %cs103)
  ret i64 %cs103
}
