#!/bin/sh
#SPOOL --cwd=/tmp --gpus 2 --env=A=\"b\"
echo hi
