/* The CG problem and option parser now live beside the examples, so that
 * examples/cg.c builds from an installed deso and its own folder alone.   */
#include "../../examples/cg_problem.h"
