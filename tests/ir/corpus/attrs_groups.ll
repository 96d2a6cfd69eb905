; Attribute groups (#N) on declarations, definitions and call sites, including "gc-leaf-function".
declare void @leaf_helper() #0
declare i64 @pure_hash(i64) #1
declare void @may_throw()

define i64 @uses_groups(i64 %x) #2 gc "statepoint-example" {
entry:
  call void @leaf_helper() #0
  %h = call i64 @pure_hash(i64 %x) #1
  call void @may_throw() #3
  ret i64 %h
}

define internal void @small() #4 {
entry:
  ret void
}

attributes #0 = { nounwind "gc-leaf-function" }
attributes #1 = { nounwind readnone willreturn }
attributes #2 = { noinline nounwind uwtable "frame-pointer"="all" }
attributes #3 = { "deopt-lowering"="live-in" "statepoint-id"="99" }
attributes #4 = { alwaysinline norecurse }
