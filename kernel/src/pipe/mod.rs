//! Pipes inside an enclave: a pipe whose ends only programs of this
//! enclave hold keeps its bytes in the LWK (local_pipe), each process
//! knowing which of its descriptors are such ends (local_fds). The system
//! calls on them are syscall/pipe_io.rs's, the descriptor changes they
//! follow syscall/pipe_fds.rs's, and the move to Linux syscall/pipe_move.rs's.

mod local_fds;
mod local_pipe;

pub use local_fds::LocalFds;
pub use local_pipe::{LocalPipe, OpenEnd, Outcome};
