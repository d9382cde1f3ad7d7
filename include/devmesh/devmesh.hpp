// devmesh/devmesh.hpp: the one header a user includes.
#pragma once
#include "config.hpp"
#include "backend.hpp"
#include "diagnostics.hpp"
#include "dim.hpp"
#include "fixed_string.hpp"
#include "group.hpp"
#include "mesh.hpp"
#include "names.hpp"
#include "print.hpp"
#include "structure.hpp"
