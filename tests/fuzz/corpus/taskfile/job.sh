#!/bin/bash
#SPOOL --cores=4 --memory=2G
#SPOOL --walltime 00:10:00 --name "my job" --after 12,13
#SPOOL --env 'GREETING=hello world' --priority=3 --retries=1
# an ordinary comment
#SPOOLX not a directive
#SBATCH --time=10

python3 run.py "$@"
