"""The release: assemble ``data/release/`` (dedup, decontamination, splits, configs, dataset card)
and publish it to the Hugging Face Hub as a tagged version (docs/design.md §8)."""
