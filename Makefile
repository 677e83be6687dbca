# tandem: build, test, demo, install.
#
#   make            build bin/tandem, bin/tandem-coder, bin/tandem-reviewer,
#                   bin/tandem-sandbox-enter
#   make demo       install missing packages, build, run the offline demo
#   make test       install missing packages, build, run every test
#   make check      check the layers, then run every test without the
#                   package step
#   make layers     fail on an #include that goes up a layer (common <
#                   proto < skills < agents < orchestrator; tools/check-layers)
#   make defects    run the defect set (tests/defects/): planted bugs, a
#                   scripted coder, a report in build/defects/report.md
#   make memcheck   run the tests under valgrind
#   make fuzz       install clang if missing, build the libFuzzer harnesses
#                   (tests/fuzz/, ASan + UBSan, objects in build/fuzz/) and
#                   run each for FUZZ_SECONDS (10); a crash fails it and
#                   leaves its input in build/fuzz/crashes/ (fuzz-build:
#                   the harnesses alone)
#   make bench      run the benchmarks under bench/ (figures: bench/RESULTS.md)
#   make install    the programs, the man pages tandem(1) and agents.yaml(5),
#                   bash and zsh completion, the commented example
#                   agents.yaml and LICENSE under PREFIX (/usr/local), all
#                   below DESTDIR when it is set (make uninstall: removed)
#
# Options: SANITIZE=address,undefined  WERROR=0  CFLAGS=...  V=1
#          FUZZ_SECONDS=N  FUZZ_TARGETS="mdp body ..."  FUZZ_CC=clang

VERSION := 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/tandem
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
SANITIZE ?=
WERROR ?= 1

PKGS := libzmq libcurl json-c yaml-0.1
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl is not linked: the agents load it when they first call a model
# (agents/libcurl.c), so no program pays for loading it at start.
PKG_LIBS := $(shell pkg-config --libs $(filter-out libcurl,$(PKGS)) \
              2>/dev/null)
CMOCKA_CFLAGS := $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wwrite-strings -Wformat=2 -Wno-format-nonliteral
# -Wno-format-truncation: one-line messages are cut with snprintf on
# purpose; gcc cannot tell that from a bug. clang has no such warning
# (and refuses the option under -Werror), so ask the compiler ($(1)).
no_format_truncation = $(if $(shell $(1) -Werror -Wno-format-truncation \
                         -E -x c /dev/null >/dev/null 2>&1 && echo yes), \
                         -Wno-format-truncation)
ifeq ($(WERROR),1)
WERROR_FLAG := -Werror
endif
BASE_WARN := $(WARN)
WARN += $(strip $(call no_format_truncation,$(CC)) $(WERROR_FLAG))

CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(WARN) $(CFLAGS) \
              -I. -DTND_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
ALL_LDFLAGS := -pthread $(LDFLAGS)
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
              -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif
LIBS := $(PKG_LIBS) -lm

MAINS := orchestrator/main.c agents/coder_main.c agents/reviewer_main.c \
         skills/enter_main.c
# tandem-sandbox-enter's own sources: libc only, never in the library
ENTER_SRC := skills/enter_main.c skills/enter_sandbox.c
LIB_SRC := $(filter-out $(MAINS) $(ENTER_SRC),$(wildcard common/*.c proto/*.c \
             skills/*.c agents/*.c orchestrator/*.c))
LIB_OBJ := $(LIB_SRC:%.c=build/obj/%.o)
LIB := build/libtandem.a

BINS := bin/tandem bin/tandem-coder bin/tandem-reviewer \
        bin/tandem-sandbox-enter
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
FAKELLM := build/tests/fakellm

ifeq ($(V),1)
Q :=
else
Q := @
endif

.PHONY: all deps demo test check layers unit integration defects memcheck \
        bench fuzz fuzz-build install uninstall clean format FORCE

all: $(BINS)

deps:
	@sh tools/install-deps

demo: deps
	@$(MAKE) --no-print-directory all
	@sh tools/demo

test: deps
	@$(MAKE) --no-print-directory check

check: all $(UNIT_BINS) $(FAKELLM)
	@sh tools/check-layers
	@sh tools/run-tests unit $(UNIT_BINS)
	@sh tools/run-tests integration tests/integration/test_*.sh
	@sh tests/defects/run

layers:
	@sh tools/check-layers

unit: $(UNIT_BINS)
	@sh tools/run-tests unit $(UNIT_BINS)

integration: all $(FAKELLM)
	@sh tools/run-tests integration tests/integration/test_*.sh

defects: all
	@sh tests/defects/run

BENCH_BINS := build/bench/workspace build/bench/skillstart build/bench/spawn \
              build/bench/snapshot

bench: all $(BENCH_BINS) $(FAKELLM)
	@sh bench/run

build/bench/%: bench/%.c $(LIB) build/flags.stamp
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(LIB) $(ALL_LDFLAGS) $(LIBS)

memcheck:
	@sh tools/install-deps --memcheck
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(FAKELLM)
	@TANDEM_MEMCHECK=1 sh tools/run-tests unit $(UNIT_BINS)
	@TANDEM_MEMCHECK=1 sh tools/run-tests integration tests/integration/test_*.sh

# Fuzzing: one libFuzzer harness per parser (tests/fuzz/fuzz_*.c) over a
# copy of the library built with clang, coverage and ASan + UBSan, in
# build/fuzz/ so it never mixes with the normal build (its own flags
# stamp). tools/run-fuzz runs them on a scratch copy of the seed corpora.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 10
FUZZ_ALL := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
            -fno-omit-frame-pointer
# Evaluated once, and only when a fuzz target is built: gcc machines
# without clang pay nothing for it.
FUZZ_WARN = $(eval FUZZ_WARN := $(BASE_WARN) $(strip $(WERROR_FLAG) \
              $(call no_format_truncation,$(FUZZ_CC))))$(FUZZ_WARN)
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -pthread $(FUZZ_WARN) -O1 -g -I. \
              -DTND_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_LIB := build/fuzz/libtandem.a
FUZZ_BINS := $(FUZZ_ALL:%=build/fuzz/fuzz_%)

fuzz:
	@sh tools/install-deps --clang
	@$(MAKE) --no-print-directory fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh tools/run-fuzz $(FUZZ_TARGETS)

fuzz-build: $(FUZZ_BINS)

build/fuzz/flags.stamp: FORCE
	@mkdir -p build/fuzz
	@echo '$(FUZZ_CC) $(FUZZ_CFLAGS) $(LIBS)' | cmp -s - $@ || \
	  echo '$(FUZZ_CC) $(FUZZ_CFLAGS) $(LIBS)' > $@

build/fuzz/obj/%.o: %.c build/fuzz/flags.stamp
	@mkdir -p $(@D)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c \
	  -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJ)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB) \
                   build/fuzz/flags.stamp
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	  $(FUZZ_LIB) -pthread $(LIBS)

# Rebuild everything when the compiler or its flags change, so a
# SANITIZE build never links against objects built without it.
FLAGS_LINE := $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(LIBS)
build/flags.stamp: FORCE
	@mkdir -p build
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@

build/obj/%.o: %.c build/flags.stamp
	@mkdir -p $(@D)
	@if [ -z "$(PKG_CFLAGS)" ]; then \
	  echo "tandem: missing -dev packages; run 'make deps' (or make test/demo)" >&2; \
	  exit 1; fi
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	$(if $(Q),@echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

bin/tandem: build/obj/orchestrator/main.o $(LIB)
bin/tandem-coder: build/obj/agents/coder_main.o $(LIB)
bin/tandem-reviewer: build/obj/agents/reviewer_main.o $(LIB)
$(filter-out bin/tandem-sandbox-enter,$(BINS)):
	@mkdir -p bin
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# libc only, and without a sanitizer's runtime: it must stay one thread
# to join a user namespace, and runs between the reviewer and a sandbox
# (skills/holder.h). Static: every sandboxed skill starts it, and without
# the dynamic loader a start costs ~0.5 ms of CPU less (bench/RESULTS.md)
ENTER_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(ALL_CFLAGS))
bin/tandem-sandbox-enter: $(ENTER_SRC) skills/enter_int.h build/flags.stamp
	@mkdir -p bin
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(ENTER_CFLAGS) -static -o $@ $(ENTER_SRC)

build/tests/test_%: tests/unit/test_%.c $(LIB) build/flags.stamp
	@mkdir -p $(@D)
	$(if $(Q),@echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CMOCKA_CFLAGS) -MMD -MP -o $@ $< $(LIB) \
	  $(ALL_LDFLAGS) $(LIBS) $(CMOCKA_LIBS)

$(FAKELLM): $(wildcard tests/fakellm/*.c tests/fakellm/*.h) $(LIB) \
            build/flags.stamp
	@mkdir -p $(@D)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(ALL_LDFLAGS) $(LIBS)

# Everything make install writes besides the programs (make uninstall
# removes these).
DATA_FILES := $(MANDIR)/man1/tandem.1 $(MANDIR)/man5/agents.yaml.5 \
              $(BASHCOMPDIR)/tandem $(ZSHCOMPDIR)/_tandem \
              $(DOCDIR)/agents.yaml $(DOCDIR)/LICENSE

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(BASHCOMPDIR) \
	  $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DOCDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 docs/man/tandem.1 $(DESTDIR)$(MANDIR)/man1/tandem.1
	install -m 0644 docs/man/agents.yaml.5 \
	  $(DESTDIR)$(MANDIR)/man5/agents.yaml.5
	install -m 0644 tools/completion/tandem.bash $(DESTDIR)$(BASHCOMPDIR)/tandem
	install -m 0644 tools/completion/_tandem $(DESTDIR)$(ZSHCOMPDIR)/_tandem
	install -m 0644 agents.yaml LICENSE $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(BINS))) \
	  $(addprefix $(DESTDIR),$(DATA_FILES))
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true

clean:
	rm -rf build bin

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

FORCE:

-include $(LIB_OBJ:.o=.d) $(MAINS:%.c=build/obj/%.d) $(UNIT_BINS:=.d) \
         $(BENCH_BINS:=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_BINS:=.d)
