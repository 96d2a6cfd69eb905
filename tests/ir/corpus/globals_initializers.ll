; Global initializers: integers, null, zeroinitializer, undef, arrays, struct constants, strings.
%Header = type { i64, i8 addrspace(1)* }
%Vtable = type { i32, void ()*, [2 x i16] }

@int_init = global i32 -17
@null_ptr = global i32* null
@null_heap = global i8 addrspace(1)* null
@zeroed = global %Header zeroinitializer
@undef_init = global i16 undef
@array_init = global [3 x i32] [i32 1, i32 2, i32 3]
@struct_init = global %Header { i64 12, i8 addrspace(1)* null }
@nested_init = global %Vtable { i32 1, void ()* @noop, [2 x i16] [i16 3, i16 4] }
@string_init = constant [12 x i8] c"hi\09there\0Aok\00"
@bytes_init = global [4 x i8] c"\00\FF\7F\80"
@array_of_structs = global [2 x { i8, i8 }] [{ i8, i8 } { i8 1, i8 2 }, { i8, i8 } zeroinitializer]
@points_to_global = global i32* @int_init
@func_table = constant [2 x void ()*] [void ()* @noop, void ()* null]
@bool_init = global i1 false

define void @noop() {
entry:
  ret void
}
