"""Quality checks of generated programs: running them (ablation, branch outcomes) and measuring them."""
