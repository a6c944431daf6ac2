// scratch: print the ops of a fuzz case (not committed)
use dsh_conformance::blackbox::gen::generate;
use dsh_conformance::ops::Renderer;
fn main() {
    let a: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let seq = generate(a[0], a[1]);
    let mut r = Renderer::with_session_prefix(&format!("q{}-", a[1]));
    for op in &seq.ops {
        let mut b = Vec::new();
        r.render(op, &mut b);
        println!("{:?}\n    {}", op, String::from_utf8_lossy(&b).trim_end());
    }
    println!("end: {:?}", seq.end);
}
