mod common;
use common::world;
use my_chrome::procs::ProcessTable;

fn tree(dir: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("find")
        .arg(dir)
        .args(["-not", "-path", "*/cli/*"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.replace(&dir.display().to_string(), ""))
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn scratch() {
    let mut world = world();
    let _chrome = world.chrome();
    let s = &world.sandbox;
    let before = tree(&s.runtime);
    eprintln!("BEFORE:\n{}", before.join("\n"));
    for round in 0..2 {
        let r = s.run(&["connect"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        s.run(&["tab-list"]);
        eprintln!("AFTER CONNECT {round}:\n{}", tree(&s.runtime).join("\n"));
        let table = ProcessTable::read().unwrap();
        let pids = table.using_path(&s.cli());
        for p in &pids {
            let pr = table.iter().find(|x| x.pid == *p).unwrap();
            eprintln!("proc {p}: {:?} cwd {:?}", pr.cmd, pr.cwd);
        }
        for p in pids {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
        eprintln!("AFTER KILL {round}:\n{}", tree(&s.runtime).join("\n"));
        let d = s.run(&["disconnect"]);
        eprintln!("disconnect: {} {}{}", d.code, d.stdout, d.stderr);
        eprintln!("AFTER DISCONNECT {round}:\n{}", tree(&s.runtime).join("\n"));
    }
}
