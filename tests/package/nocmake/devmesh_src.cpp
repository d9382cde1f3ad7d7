// devmesh's compiled part for a build without CMake: this one file, with the same flags as
// the program's other files (DEVMESH_SEPARATE_COMPILATION, the backends' macros).
#include <devmesh/src.hpp>
