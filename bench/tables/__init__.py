"""The README's generated blocks: each name, as in its markers, and the
function that renders it from every results file ({stem: data})."""
from tables import enclave, hrt, insitu, kmsg, lwk, mpi, noise, processes, programs, resize, summary

BLOCKS = {}
for _module in [summary, lwk, enclave, programs, processes, mpi, kmsg, insitu, noise, resize, hrt]:
    BLOCKS.update(_module.BLOCKS)
