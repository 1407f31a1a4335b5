# ujbd — one non-recursive GNU Makefile.
#   make            static and shared libujbd, the ujbd tool, examples/
#   make run        the whole lab (ujbd lab, default seed): the tables
#   make tour       the short tour of the tools (scripts/tour)
#   make check      every test (installs missing Debian packages first)
#   make asan|tsan  the unit tests under ASan+UBSan / TSan
#   make fuzz       the libFuzzer target (clang)
#   make install    PREFIX=/usr/local DESTDIR= (the tool, the library, headers,
#                   pkg-config, man pages, bash completion)
# Sources are found by wildcard: src/<layer>/*.c make the library,
# tools/*.c the ujbd binary, tests/<layer>/test_*.c one test program each,
# tests/<layer>/*.sh shell tests. Quiet ("  CC src/x.c"); V=1 shows the commands.
# `make` and `make install` are release builds (warnings are not errors);
# check, asan, tsan and tests build with -Werror.

VERSION   := 0.1.0
SOVERSION := 0
PREFIX    ?= /usr/local
BUILD     ?= build
CC        ?= cc
SAN       ?=

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
# Warnings are errors where someone works on the code (check, asan, tsan,
# tests, CI); a plain `make` or `make install` is a release build, which must
# not fail because a newer compiler learnt a new warning. WERROR= overrides.
RELEASE_GOALS := all install run tour clean deps
WERROR   ?= $(if $(filter-out $(RELEASE_GOALS),$(or $(MAKECMDGOALS),all)),-Werror)
# USDT probes need sys/sdt.h (systemtap-sdt-dev); without it the trace
# events still reach the in-process hook, and the build says so once.
ifeq ($(origin HAVE_SDT),undefined)
HAVE_SDT := $(shell printf '\043include <sys/sdt.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
endif
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC $(WARN) $(WERROR) $(CFLAGS) $(SAN) -Iinclude -Isrc -MMD -MP \
	$(if $(HAVE_SDT),,-DUJBD_NO_SDT)
LDLIBS   := -luring -lext2fs -lcom_err -lpthread -lm
ALL_LDFLAGS := $(LDFLAGS) $(SAN)

LIB_SRC   := $(sort $(wildcard src/*/*.c))
TOOL_SRC  := $(sort $(wildcard tools/*.c))
TEST_SRC  := $(sort $(wildcard tests/*/test_*.c))
TEST_SH   := $(sort $(wildcard tests/*/*.sh))
EX_SRC    := $(sort $(wildcard examples/*.c))

LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ  := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TEST_BIN  := $(TEST_SRC:%.c=$(BUILD)/%)
EX_BIN    := $(EX_SRC:%.c=$(BUILD)/%)

STATIC    := $(BUILD)/libujbd.a
SHARED    := $(BUILD)/libujbd.so.$(VERSION)
UJBD      := $(BUILD)/ujbd

ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-6s %s\n'
endif

.PHONY: all run tour check unit asan tsan fuzz install install-completion clean deps tests
all: $(STATIC) $(SHARED) $(UJBD) $(EX_BIN)

deps:
	@./scripts/install-deps

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(if $(HAVE_SDT),,@echo "  NOTE   no sys/sdt.h: built without USDT probes (systemtap-sdt-dev has it)")
	$(quiet) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(SHARED): $(LIB_OBJ) ujbd.map
	$(quiet) LD $@
	$(Q)$(CC) -shared -Wl,-soname,libujbd.so.$(SOVERSION) -Wl,--version-script=ujbd.map \
		$(ALL_LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)
	$(Q)ln -sf libujbd.so.$(VERSION) $(BUILD)/libujbd.so.$(SOVERSION)
	$(Q)ln -sf libujbd.so.$(VERSION) $(BUILD)/libujbd.so

$(UJBD): $(TOOL_OBJ) $(STATIC)
	$(quiet) LD $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(TOOL_OBJ) $(STATIC) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(STATIC) tests/t.h tests/t_sim.h
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(STATIC) $(LDLIBS)

# The examples build as a user's program would: the public headers only,
# the compiler's own C dialect, the static link line of ujbd.pc.
$(BUILD)/examples/%: examples/%.c examples/scratch.h $(STATIC)
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(SAN) -Wall -Wextra $(WERROR) -Iinclude -o $@ $< $(STATIC) $(LDLIBS)

# Benchmark helpers that link the library (bench/replay runs them).
BENCH_BIN := $(BUILD)/bench/replay_open

$(BUILD)/bench/%: bench/%.c $(STATIC)
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(STATIC) $(LDLIBS)

tests: $(TEST_BIN) $(UJBD) $(EX_BIN) $(BENCH_BIN)

# The unit tests and the shell tests, through tests/run (closing line
# "N passed, N failed, N skipped").
unit: tests
	@UJBD=$(CURDIR)/$(UJBD) BUILD=$(CURDIR)/$(BUILD) SRCDIR=$(CURDIR) \
		./tests/run $(TEST_BIN) $(TEST_SH)

check: deps
	@$(MAKE) --no-print-directory all tests
	@$(MAKE) --no-print-directory unit

# The whole lab with the default seed: the build in one quiet line per file
# (V=1: the commands), the tables on stdout, progress on stderr when it is a
# terminal, then what to try next.
run: deps
	@$(MAKE) --no-print-directory all
	@$(UJBD) lab
	@echo
	@echo "next: $(UJBD) lab --out=DIR writes these tables as CSV, JSON, plots and report.html;"
	@echo "      $(UJBD) lab --list names the scenarios and variants (--scenario=NAME runs one);"
	@echo "      make tour walks through the tools; $(UJBD) help lists the verbs."

tour: deps
	@$(MAKE) --no-print-directory all
	@UJBD=$(CURDIR)/$(UJBD) ./scripts/tour

asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" unit

tsan: deps
	@$(MAKE) --no-print-directory BUILD=build/tsan SAN="-fsanitize=thread" \
		CFLAGS="-O1 -g" unit

FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
fuzz: deps
	@$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang CFLAGS="-O1 -g -Wno-error" \
		SAN="-fsanitize=fuzzer-no-link,address,undefined" $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/fuzz/%)
	@echo "run: build/fuzz/fuzz/fuzz_journal -max_total_time=60 NEWDIR tests/fuzz/corpus"

build/fuzz/fuzz/%: tests/fuzz/%.c $(STATIC)
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -Itests -o $@ $< $(STATIC) $(LDLIBS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/ujbd $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3
	install -m 755 $(UJBD) $(DESTDIR)$(PREFIX)/bin/ujbd
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libujbd.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libujbd.so.$(SOVERSION)
	ln -sf libujbd.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libujbd.so
	install -m 644 include/ujbd/*.h $(DESTDIR)$(PREFIX)/include/ujbd/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' ujbd.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/ujbd.pc
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	@$(MAKE) --no-print-directory install-completion

# bash completion, where bash-completion loads it on demand
install-completion:
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 tools/ujbd.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/ujbd

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(TEST_BIN:=.d)
