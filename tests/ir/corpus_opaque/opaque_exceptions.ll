; Opaque pointers with invoke, landingpad (cleanup and catch ptr null) and resume.
declare i32 @__gxx_personality_v0(...)
declare void @may_throw(ptr addrspace(1))

define void @guarded(ptr addrspace(1) %obj) personality ptr @__gxx_personality_v0 {
entry:
  invoke void @may_throw(ptr addrspace(1) %obj)
          to label %ok unwind label %bad

ok:
  ret void

bad:
  %lp = landingpad { ptr, i32 }
          cleanup
          catch ptr null
  resume { ptr, i32 } %lp
}
