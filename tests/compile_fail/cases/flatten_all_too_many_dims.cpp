// Misuse: flatten<"all">() of a 64-dim mesh: the new dim plus its 64 former dims (kept as aliases) are 65
// expect: devmesh: too many dims: a mesh holds at most 64 dims
// expect: too_many_dims<.*size_value<65>.*size_value<64>
#include <devmesh/devmesh.hpp>

namespace dm = devmesh;
using namespace dm::literals;

// dims "0", "1", ... "63", each of size 1
#define D(i) dm::dim<#i, 1>
using full = dm::mesh<
    D(0), D(1), D(2), D(3), D(4), D(5), D(6), D(7),
    D(8), D(9), D(10), D(11), D(12), D(13), D(14), D(15),
    D(16), D(17), D(18), D(19), D(20), D(21), D(22), D(23),
    D(24), D(25), D(26), D(27), D(28), D(29), D(30), D(31),
    D(32), D(33), D(34), D(35), D(36), D(37), D(38), D(39),
    D(40), D(41), D(42), D(43), D(44), D(45), D(46), D(47),
    D(48), D(49), D(50), D(51), D(52), D(53), D(54), D(55),
    D(56), D(57), D(58), D(59), D(60), D(61), D(62), D(63)>;
#undef D
void misuse() { (void)full{}.flatten<"all">(); }
