# Shortcuts for ./run.sh, which does the setup (Debian packages, .venv, pip) itself.
.PHONY: test book html bench setup

test:
	./run.sh test

book:
	./run.sh book

html:
	./run.sh html

bench:
	./run.sh bench

setup:
	./run.sh setup
