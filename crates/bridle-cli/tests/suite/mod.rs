mod aimock;
mod bridle;

mod run;
mod tool;
