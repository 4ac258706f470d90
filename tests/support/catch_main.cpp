// The one Catch2 main every host test links. Built once into fp8q_catch_main: it is by far the
// slowest translation unit to compile.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
