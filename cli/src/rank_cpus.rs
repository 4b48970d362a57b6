//! `atoll run --rank-cpus`: an MPI rank started by a launcher takes its own
//! share of the enclave's CPUs, found from the launcher's local-rank
//! variables (as mOS's `yod -R MPI` does), so that the ranks in one
//! enclave run on disjoint cores.

/// (local rank, ranks on this node) variables, launcher by launcher: Open
/// MPI, MPICH's Hydra, Slurm's srun.
const LAUNCHERS: [(&str, &str); 3] = [
    ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("SLURM_LOCALID", "SLURM_TASKS_PER_NODE"),
];

/// This rank's place among the node's ranks, from `var`; an error names the
/// variables looked at.
pub fn local_rank(var: impl Fn(&str) -> Option<String>) -> Result<(u32, u32), String> {
    for (rank, size) in LAUNCHERS {
        let number = |name: &str| var(name).and_then(|v| leading_number(&v));
        if let (Some(r), Some(n)) = (number(rank), number(size)) {
            if n == 0 || r >= n {
                return Err(format!("--rank-cpus: {rank}={r} is not below {size}={n}"));
            }
            return Ok((r, n));
        }
    }
    let names: Vec<&str> = LAUNCHERS.iter().map(|(r, _)| *r).collect();
    Err(format!(
        "--rank-cpus: no local rank in the environment ({}); start atoll run from an MPI launcher, or use --cpus",
        names.join(", ")
    ))
}

/// Slurm writes counts as "4(x2)": the number first.
fn leading_number(v: &str) -> Option<u32> {
    let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The LWK CPUs of rank `rank` of `ranks` in an enclave of `cpus` CPUs:
/// consecutive blocks, as even as can be; with more ranks than CPUs, each
/// rank gets one CPU in turn, shared with as few others as can be. In
/// turn, because the launcher counts every rank on the node: a job whose
/// ranks go to two enclaves (`-n 2 atoll run e ... : -n 2 atoll run f ...`)
/// gives each enclave a run of consecutive ranks, which then get its CPUs
/// one each.
pub fn share(cpus: u32, rank: u32, ranks: u32) -> Vec<u32> {
    if ranks >= cpus {
        return vec![rank % cpus];
    }
    (rank * cpus / ranks..(rank + 1) * cpus / ranks).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn finds_the_launchers_rank() {
        let open_mpi = env(&[("OMPI_COMM_WORLD_LOCAL_RANK", "2"), ("OMPI_COMM_WORLD_LOCAL_SIZE", "4")]);
        assert_eq!(local_rank(open_mpi), Ok((2, 4)));
        let hydra = env(&[("MPI_LOCALRANKID", "0"), ("MPI_LOCALNRANKS", "2")]);
        assert_eq!(local_rank(hydra), Ok((0, 2)));
        let slurm = env(&[("SLURM_LOCALID", "1"), ("SLURM_TASKS_PER_NODE", "4(x2)")]);
        assert_eq!(local_rank(slurm), Ok((1, 4)));
        assert!(local_rank(env(&[])).unwrap_err().contains("no local rank"));
        let bad = env(&[("MPI_LOCALRANKID", "3"), ("MPI_LOCALNRANKS", "2")]);
        assert!(local_rank(bad).unwrap_err().contains("not below"));
    }

    #[test]
    fn shares_are_disjoint_and_cover_the_enclave() {
        for cpus in 1..=16 {
            for ranks in 1..=cpus {
                let all: Vec<u32> = (0..ranks).flat_map(|r| share(cpus, r, ranks)).collect();
                assert_eq!(all, (0..cpus).collect::<Vec<_>>(), "{cpus} CPUs, {ranks} ranks");
                assert!((0..ranks).all(|r| !share(cpus, r, ranks).is_empty()));
            }
        }
        assert_eq!(share(4, 1, 2), vec![2, 3]);
        assert_eq!(share(3, 1, 2), vec![1, 2]);
        // More ranks than CPUs: one each, in turn, so that ranks 0-1 in one
        // 2-CPU enclave and 2-3 in another each get CPUs 0 and 1.
        assert_eq!((0..4).map(|r| share(2, r, 4)).collect::<Vec<_>>(), [[0], [1], [0], [1]]);
        assert_eq!((0..6).map(|r| share(4, r, 6)).collect::<Vec<_>>(), [[0], [1], [2], [3], [0], [1]]);
    }
}
