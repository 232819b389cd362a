mod harness;
mod raw_server;
mod tools;

mod calls;
mod interrupt;
mod limits;
mod provider_failures;
