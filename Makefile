# deso: a plain GNU Makefile with out-of-tree builds.
#   make            library, programs and tests into $(BUILD) (default build/)
#   make check      set-up, layer check, unit tests, MPI tests at P = 1..4,
#                   the communication counter, then the unit tests again
#                   under ASan + UBSan (the fast group: under 15 minutes)
#   make check-long the long group: MPI tests at the counts on their
#                   deso-np-long lines, valgrind on the MPI paths, the
#                   mutation check (CI runs it after make check)
#   make demo       set-up, build, run the CG demo
# Source lists are wildcards: a new .c file in a folder joins its target.

BUILD   ?= build
PREFIX  ?= /usr/local
VERSION := 0.1.0
CC      := mpicc.mpich
MPIEXEC := mpiexec.mpich
NP      ?= 1 2 3 4

# SAN=1 builds with AddressSanitizer and UndefinedBehaviorSanitizer.
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
OPTFLAGS ?= -O1 -g
else
SANFLAGS :=
OPTFLAGS ?= -O2 -g
endif

# MPI comes from MPICH by name, never through pkg-config's `mpi` alias:
# Debian's scalapack-mpich.pc requires `mpi`, which points at Open MPI as
# soon as libopenmpi-dev is installed, and would put Open MPI's mpi.h and
# -lmpi into an MPICH build.  ScaLAPACK is therefore linked by its library
# name; its LAPACK and BLAS come from OpenBLAS, which carries both.  The
# compiler, mpicc.mpich, links MPICH itself; deso/deso.h refuses any mpi.h
# that is not MPICH's.
MPI_CFLAGS := $(shell pkg-config --cflags mpich 2>/dev/null)
PKG_CFLAGS := $(MPI_CFLAGS) $(shell pkg-config --cflags openblas cmocka 2>/dev/null)
BLAS_LIBS  ?= $(shell pkg-config --libs openblas 2>/dev/null)
SCALAPACK_LIBS ?= -lscalapack-mpich
CMOCKA_LIBS ?= $(shell pkg-config --libs cmocka 2>/dev/null)
# METIS (Debian's libmetis-dev) partitions the sparse placement's graph.
METIS_LIBS ?= -lmetis

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS  := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPTFLAGS) $(WARN) $(SANFLAGS) \
           -fPIC -MMD -MP -I. -Iplacement $(PKG_CFLAGS)
LDFLAGS := $(SANFLAGS)
LIBS    := $(SCALAPACK_LIBS) $(METIS_LIBS) $(BLAS_LIBS) -lm

# Lowest first (scripts/check-layers.sh enforces the order).
LAYERS  := placement blas optimizer deso/core deso/remap deso/runtime deso/io deso
LIB_SRC := $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)

TEST_COMMON_SRC := $(wildcard tests/common/*.c)
TEST_COMMON_OBJ := $(TEST_COMMON_SRC:%.c=$(BUILD)/obj/%.o)

# Serial tests (one process, no MPI launch) and MPI tests (tests/deso/).
UNIT_SRC := $(foreach d,placement blas optimizer remap io,$(wildcard tests/$(d)/test_*.c))
MPI_SRC  := $(wildcard tests/deso/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/%.c=$(BUILD)/tests/%)
MPI_BIN  := $(MPI_SRC:tests/%.c=$(BUILD)/tests/%)

# examples/foo_bar.c -> build/bin/deso-foo-bar
PROG_SRC := $(wildcard examples/*.c)
PROG_BIN := $(foreach s,$(PROG_SRC),$(BUILD)/bin/deso-$(subst _,-,$(basename $(notdir $(s)))))

# The communication counter: a PMPI interposer, preloaded into the tests
# of tests/pmpi/ (never into the library).  Built without sanitizers: it
# must load before anything else.
PMPI_LIB  := $(BUILD)/tests/pmpi/libpmpi_count.so
COUNT_BIN := $(BUILD)/tests/pmpi/test_counts

# cg_petsc.c is the PETSc anchor: Open MPI, built by scripts/petsc-anchor.sh
# (mpi_latency.c is built for both MPIs: for MPICH here, for Open MPI by
# scripts/openmpi-latency.sh into BUILD/bench/mpi_latency_openmpi)
BENCH_SRC := $(filter-out tests/bench/cg_petsc.c,$(wildcard tests/bench/*.c))
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)

# ABI version: the shared library's SONAME is libdeso.so.$(ABI).
ABI     := 0
STATIC  := $(BUILD)/lib/libdeso.a
SHARED  := $(BUILD)/lib/libdeso.so
SONAME  := libdeso.so.$(ABI)
# Every object, every name visible: what the tests link, to reach inside.
INTERNAL := $(BUILD)/lib/internal/libdeso.a

.PHONY: all lib programs tests check check-unit check-mpi check-counts check-long check-asan check-asan-walk \
        check-fuzz check-install check-mpi-alias check-cli check-krylov check-abort check-layers demo setup clean bench bench-remap bench-ooc bench-ooc-iread bench-counts bench-overhead bench-sparse bench-sparse-counts \
        bench-sweep benches install

all: lib programs tests benches

lib: $(STATIC) $(SHARED) $(INTERNAL)
programs: $(PROG_BIN)
tests: $(UNIT_BIN) $(MPI_BIN) $(COUNT_BIN) $(PMPI_LIB)
benches: $(BENCH_BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# Examples include deso.h by its bare name, as installed programs do.
$(BUILD)/obj/examples/%.o: CFLAGS += -Ideso

# The library's own names are hidden (the public headers mark the API):
# libdeso.so exports only the API, and libdeso.a is one relocatable object
# in which every other name is made local, so nothing of it can collide
# with a user's or another library's names (blas_* would meet OpenBLAS's).
$(LIB_OBJ): CFLAGS += -fvisibility=hidden

$(INTERNAL): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ $(BUILD)/lib/deso.o
	ld -r -o $(BUILD)/lib/deso.o $^
	objcopy --localize-hidden $(BUILD)/lib/deso.o
	ar rcs $@ $(BUILD)/lib/deso.o
	rm -f $(BUILD)/lib/deso.o

$(SHARED): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,-soname,$(SONAME) -o $@.$(VERSION) $^ $(LIBS)
	ln -sf libdeso.so.$(VERSION) $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_COMMON_OBJ) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(TEST_COMMON_OBJ) $(INTERNAL) $(LIBS) $(CMOCKA_LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(STATIC) $(LIBS)

# remap_plan plans ranks it is not (deso__remap_plan_as, internal).
$(BUILD)/bench/remap_plan: $(BUILD)/obj/tests/bench/remap_plan.o $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(INTERNAL) $(LIBS)

# opt_time searches the optimiser's graphs (optimizer/, internal) with the
# optimiser tests' CG graph (tests/optimizer/opt_test.h, on cmocka).
$(BUILD)/bench/opt_time: $(BUILD)/obj/tests/bench/opt_time.o $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(INTERNAL) $(LIBS) $(CMOCKA_LIBS)

$(PMPI_LIB): tests/pmpi/pmpi_count.c tests/pmpi/pmpi_count.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -fPIC -shared -o $@ $< $(MPI_CFLAGS)

.SECONDEXPANSION:
$(BUILD)/bin/deso-%: $$(BUILD)/obj/examples/$$(subst -,_,$$*).o $(STATIC)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(STATIC) $(LIBS)

setup:
	@sh scripts/setup.sh

# Includes may only point down the layers (doc/DESIGN.md, "Layers").
check-layers:
	@sh scripts/check-layers.sh
	@sh scripts/check-handler.sh

# make check builds with one job a core (the tests themselves run one at a
# time); a caller's own -j (a jobserver in MAKEFLAGS) is left to decide.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PAR := $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))

check: setup check-layers
	@$(MAKE) --no-print-directory $(PAR) all
	@$(MAKE) --no-print-directory check-unit check-mpi check-counts
	@$(MAKE) --no-print-directory check-install check-mpi-alias check-cli check-krylov check-abort
	@$(MAKE) --no-print-directory check-asan
	@$(MAKE) --no-print-directory check-fuzz

check-unit: $(UNIT_BIN)
	@sh scripts/run-tests.sh unit "$(UNIT_BIN)"

check-mpi: $(MPI_BIN)
	@MPIEXEC=$(MPIEXEC) NP="$(NP)" NP_ONLY="$(NP_ONLY)" sh scripts/run-tests.sh mpi "$(MPI_BIN)"

# deso's statistics against what the PMPI interposer saw.
check-counts: $(COUNT_BIN) $(PMPI_LIB)
	@MPIEXEC=$(MPIEXEC) PRELOAD=$(abspath $(PMPI_LIB)) NP_ONLY="$(NP_ONLY)" \
	 sh scripts/run-tests.sh counts "$(COUNT_BIN)"

WALK_TEST := test_alloc_rank

# The unit tests, and the MPI tests at P = 2, under ASan + UBSan.  In the
# MPI pass LeakSanitizer is off: MPICH's transport leaves ~1 KB allocated by
# a module it unloads before exit, which no suppression can name.  Leaks on
# MPI paths are checked with valgrind instead (scripts/valgrind-remap.sh,
# scripts/soak.sh).
check-asan:
	@$(MAKE) --no-print-directory $(PAR) BUILD=$(BUILD)/asan SAN=1 check-unit
	@ASAN_OPTIONS=detect_leaks=0 \
	 $(MAKE) --no-print-directory $(PAR) BUILD=$(BUILD)/asan SAN=1 NP_ONLY=2 \
	   MPI_BIN="$(filter-out %/$(WALK_TEST),$(MPI_BIN:$(BUILD)/%=$(BUILD)/asan/%))" check-mpi

# The one-rank failure walk under the sanitizers: in the long group, where
# its minutes fit.
check-asan-walk:
	@ASAN_OPTIONS=detect_leaks=0 DESO_TEST_TIMEOUT=$${DESO_TEST_TIMEOUT:-900} \
	 $(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN=1 NP_ONLY=2 \
	   MPI_BIN="$(BUILD)/asan/tests/deso/$(WALK_TEST)" check-mpi

# The long group (runs of several minutes: a longer timeout per run).
# valgrind's leak check covers the MPI paths that the
# sanitizer pass cannot (see check-asan): one remap executed 10^4 times and
# a CG soak with the plan cache replaying, both at P = 2; an out-of-core
# CG killed with kill -9 mid-stream leaves its directory empty.
check-long: setup
	@$(MAKE) --no-print-directory $(PAR) all
	@MPIEXEC=$(MPIEXEC) DESO_TEST_TIMEOUT=$${DESO_TEST_TIMEOUT:-900} \
	 sh scripts/run-tests.sh mpi-long "$(MPI_BIN)"
	@MPIEXEC=$(MPIEXEC) PRELOAD=$(abspath $(PMPI_LIB)) \
	 sh scripts/run-tests.sh counts-long "$(COUNT_BIN)"
	@$(MAKE) --no-print-directory check-asan-walk
	@FUZZ_SECONDS=240 sh scripts/run-fuzz.sh $(BUILD)
	@sh scripts/valgrind-remap.sh $(BUILD)
	@sh scripts/soak.sh $(BUILD)
	@sh scripts/ooc-kill.sh $(BUILD)
	@MPIEXEC=$(MPIEXEC) sh scripts/test-krylov.sh --long $(BUILD)
	@sh scripts/mutate.sh

# make install into a scratch prefix; examples build there with pkg-config.
check-install: lib programs
	@sh scripts/test-install.sh $(BUILD)

# The build and the install test again where pkg-config's `mpi` alias
# names Open MPI.
check-mpi-alias:
	@JOBS=$(JOBS) sh scripts/test-mpi-alias.sh

# DESO_ERRORS_ABORT: a failing call prints its message and ends the job.
check-abort: tests
	@sh scripts/test-abort.sh $(BUILD)

# Bad command-line input to the programs: one reason line, no crash.
check-cli: programs
	@sh scripts/test-cli.sh $(BUILD)

# The Krylov examples against their plain-CBLAS twins, and README's
# solver-loop diffs up to date with the examples.
check-krylov: programs
	@python3 scripts/readme_diffs.py --check
	@MPIEXEC=$(MPIEXEC) sh scripts/test-krylov.sh $(BUILD)

# libFuzzer targets in tests/fuzz, each for FUZZ_SECONDS (15 here; the
# long group runs them 240 s each).
check-fuzz:
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-15} sh scripts/run-fuzz.sh $(BUILD)

# Benchmarks, not tests: raw results into doc/*.jsonl, and README's
# benchmark sections generated from them (scripts/bench_report.py).
# make bench: the large sizes (scripts/bench.sh), then the small/mid sweep
# (scripts/bench-sweep.sh), which also builds its Open MPI programs itself
# (PETSc's anchor, the Open MPI latency probe): never part of make all.
bench: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench.sh $(BUILD)
	@bash scripts/bench-sweep.sh $(BUILD)

bench-sweep: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench-sweep.sh $(BUILD)

bench-remap: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench-remap.sh $(BUILD)

# out-of-core CG: the small case (OOC_CASE=large: about 36 GB, checked
# against the free disk first)
bench-ooc: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench-ooc.sh $(BUILD) $(or $(OOC_CASE),small)

# the streamed reads' overlap: reader thread against MPI_File_iread_at
bench-ooc-iread: setup
	@bash scripts/bench-ooc-iread.sh $(BUILD)

# the sparse CG against PETSc on MATMPIAIJ and its sequential twin at
# P = 1, 2 (BENCH_QUICK=1: a smoke run); builds PETSc's anchor itself;
# then its counted part (below)
bench-sparse: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench-sparse.sh $(BUILD)

# the sparse CG's halo bytes and messages per iteration, counted at
# P = 4, 9, 16 with row blocks, the trace graph's partition and auto
bench-sparse-counts: setup
	@$(MAKE) --no-print-directory all
	@bash scripts/bench-sparse-counts.sh $(BUILD)

# MPI calls per CG iteration, deso against the PBLAS CG, counted by the
# PMPI interposer at P = 4, 9, 16
bench-counts: setup
	@$(MAKE) --no-print-directory all $(PMPI_LIB)
	@bash scripts/bench-counts.sh $(BUILD)

# Instructions per CG iteration by category, deso against cg_seq (P = 1)
# and cg_pblas (P = 2), counted by callgrind
bench-overhead: setup
	@$(MAKE) --no-print-directory all $(BUILD)/bench/cg_seq $(BUILD)/bench/cg_pblas
	@bash scripts/bench-overhead.sh $(BUILD)

demo: setup
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh $(BUILD)

# The public headers: deso.h and the headers it includes.
PUBLIC_H := deso/deso.h deso/deso_redist.h deso/deso_stats.h placement/deso_errors.h \
            deso/deso_cblas.h

install: lib programs
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/deso \
	           $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(STATIC) $(SHARED).$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libdeso.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libdeso.so
	install -m 644 $(PUBLIC_H) $(DESTDIR)$(PREFIX)/include/deso/
	install -m 755 $(PROG_BIN) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' deso.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/deso.pc

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
