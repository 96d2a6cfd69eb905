# Shortcuts for ./run.sh, which does the setup (Debian packages, .venv, pip) itself.
.PHONY: test book bench setup

test:
	./run.sh test

book:
	./run.sh book

bench:
	./run.sh bench

setup:
	./run.sh setup
