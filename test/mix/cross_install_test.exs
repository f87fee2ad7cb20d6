defmodule RustyJson.CrossInstallTest do
  # `mix compile` of a copy of this project for another machine than the one compiling it (a Nerves firmware, a
  # release for another architecture or system): the target's artifact is installed, under the name that target's
  # VM loads, never this machine's, and the compile succeeds though this VM cannot load it. The artifacts for other
  # machines are stand-ins with their target's header (test/support/artifact.exs), served from a directory.
  use ExUnit.Case, async: false

  Code.require_file("../../mix/precompiled.exs", __DIR__)
  Code.require_file("../support/child_project.exs", __DIR__)
  alias RustyJson.{ChildProject, Precompiled, TestArtifact}
  alias RustyJson.Precompiled.Target

  @moduletag :tmp_dir
  # Child VMs compiling 18 modules, several times, on a shared CPU.
  @moduletag timeout: 600_000

  @version Mix.Project.config()[:version]
  @rpi4 [
    {"MIX_TARGET", "rpi4"},
    {"TARGET_ARCH", "aarch64"},
    {"TARGET_OS", "linux"},
    {"TARGET_ABI", "gnu"},
    {"TARGET_CPU", "cortex_a72"}
  ]
  @rpi3 [
    {"MIX_TARGET", "rpi3"},
    {"TARGET_ARCH", "arm"},
    {"TARGET_OS", "linux"},
    {"TARGET_ABI", "gnueabihf"},
    {"TARGET_CPU", "cortex_a53"}
  ]

  setup %{tmp_dir: tmp} do
    project = ChildProject.copy!(tmp)
    served = Path.join(tmp, "served")

    base = [
      {"RUSTYJSON_PRECOMPILED_URL", served},
      {"RUSTYJSON_CACHE_DIR", Path.join(tmp, "cache")}
    ]

    %{
      project: project,
      served: served,
      native: Path.join(project, "priv/native"),
      no_cargo: base ++ ChildProject.no_cargo_env(tmp),
      with_cargo: base
    }
  end

  # Serves an artifact for each of `targets` (NIF version 2.16, the crate's), this VM's own library for this VM's
  # target and a stand-in for the others; lists them in the checksum file. Returns target => library.
  defp serve!(ctx, targets) do
    artifacts =
      for target <- targets, into: %{} do
        library =
          if target == Precompiled.target(),
            do: TestArtifact.installed_library(),
            else: TestArtifact.library_for(target)

        name = Target.artifact_name(@version, "2.16", target)

        sha =
          TestArtifact.archive_entries!(ctx.served, name, [{Target.library_name(target), library}])

        {target, {name, sha, library}}
      end

    ChildProject.write_checksums!(
      ctx.project,
      for({_, {name, sha, _}} <- artifacts, do: {name, sha})
    )

    Map.new(artifacts, fn {target, {_, _, library}} -> {target, library} end)
  end

  defp mix(ctx, env), do: ChildProject.mix(ctx.project, ["compile"], env)

  defp stamp(ctx, file), do: File.read!(Path.join(ctx.native, file <> ".stamp"))

  test "Nerves: a Raspberry Pi 4, then a Pi 3 in 32-bit mode, get an ELF of their architecture; back on the host, the host's",
       ctx do
    libraries =
      serve!(ctx, [
        "aarch64-unknown-linux-gnu",
        "armv7-unknown-linux-gnueabihf",
        "arm-unknown-linux-gnueabihf",
        Precompiled.target()
      ])

    installed = Path.join(ctx.native, "rustyjson_nif.so")

    assert {output, 0} = mix(ctx, ctx.no_cargo ++ @rpi4)
    assert File.read!(installed) == libraries["aarch64-unknown-linux-gnu"]

    assert <<0x7F, "ELF", 2, 1, _::binary-size(10), 3::little-16, 183::little-16, _::binary>> =
             File.read!(installed)

    assert stamp(ctx, "rustyjson_nif.so") =~ "\ntarget aarch64-unknown-linux-gnu\n"
    refute output =~ "could not load the RustyJson NIF"

    # The Pi 3's armv7 build (the ARMv6 one is listed too): a 32-bit ARM ELF, the stamp's target switched.
    assert {output, 0} = mix(ctx, ctx.no_cargo ++ @rpi3)
    assert File.read!(installed) == libraries["armv7-unknown-linux-gnueabihf"]

    assert <<0x7F, "ELF", 1, 1, _::binary-size(10), 3::little-16, 40::little-16, _::binary>> =
             File.read!(installed)

    assert stamp(ctx, "rustyjson_nif.so") =~ "\ntarget armv7-unknown-linux-gnueabihf\n"
    refute output =~ "could not load the RustyJson NIF"

    # MIX_TARGET gone: the host's library again, and it loads.
    assert {_, 0} = mix(ctx, ctx.no_cargo)
    assert File.read!(installed) == TestArtifact.installed_library()
    script = ~S|IO.write(RustyJson.encode!(%{"pi" => [3, 4]}))|
    assert {output, 0} = ChildProject.mix(ctx.project, ["run", "-e", script], ctx.no_cargo)
    assert String.ends_with?(output, ~s({"pi":[3,4]}))
  end

  test "RUSTYJSON_TARGET for Windows: the DLL installed as rustyjson_nif.dll, the host's library removed",
       ctx do
    libraries = serve!(ctx, ["x86_64-pc-windows-gnu", Precompiled.target()])
    env = [{"RUSTYJSON_TARGET", "x86_64-pc-windows-gnu"}]

    assert {_, 0} = mix(ctx, ctx.no_cargo)
    assert File.exists?(Path.join(ctx.native, "rustyjson_nif.so"))

    # Where cargo could build for the host, the target's artifact is still what is installed.
    for run_env <- [ctx.no_cargo ++ env, ctx.with_cargo ++ env] do
      assert {output, 0} = mix(ctx, run_env)
      refute output =~ "could not load the RustyJson NIF"

      assert File.ls!(ctx.native) |> Enum.sort() == [
               "rustyjson_nif.dll",
               "rustyjson_nif.dll.stamp"
             ]

      dll = File.read!(Path.join(ctx.native, "rustyjson_nif.dll"))
      assert dll == libraries["x86_64-pc-windows-gnu"]
      assert <<"MZ", _::binary>> = dll

      assert stamp(ctx, "rustyjson_nif.dll") =~
               "archive rustyjson_nif-v#{@version}-nif-2.16-x86_64-pc-windows-gnu.dll.tar.gz\n"
    end
  end

  test "an unknown target, or MIX_TARGET without Nerves' variables: one error naming it, cargo or not",
       ctx do
    serve!(ctx, [Precompiled.target()])

    for run_env <- [ctx.no_cargo, ctx.with_cargo] do
      assert {output, status} =
               mix(ctx, run_env ++ [{"RUSTYJSON_TARGET", "sparc64-unknown-linux-gnu"}])

      assert status != 0

      message =
        "RUSTYJSON_TARGET=sparc64-unknown-linux-gnu names sparc64-unknown-linux-gnu, a target RustyJson has " <>
          "no NIF for; the supported targets are: #{Enum.join(Target.supported(), ", ")}"

      assert length(String.split(output, message)) == 2, output

      assert {output, status} = mix(ctx, run_env ++ [{"MIX_TARGET", "rpi4"}])
      assert status != 0

      assert output =~
               "MIX_TARGET=rpi4 is set, but not all of TARGET_ARCH, TARGET_OS and TARGET_ABI"

      refute File.exists?(ctx.native)
    end
  end

  test "a forced build for another target runs cargo build --target and installs what it built, once checked; cargo failing is one error",
       ctx do
    # A stand-in cargo (the real one would need the target's standard library and linker): it logs its arguments
    # and writes $FAKE_LIBRARY where cargo puts the library, or fails as cargo does without the target.
    File.rm!(Path.join(ctx.project, "native"))
    File.mkdir_p!(Path.join(ctx.project, "native"))
    fake_bin = Path.join(ctx.tmp_dir, "fake_bin")
    File.mkdir_p!(fake_bin)
    log = Path.join(ctx.tmp_dir, "cargo.log")

    File.write!(Path.join(fake_bin, "cargo"), """
    #!/bin/sh
    echo "$@" >>"#{log}"
    [ -n "$FAKE_FAIL" ] && { echo "error[E0463]: can't find crate for core" >&2; exit 101; }
    while [ $# -gt 0 ]; do
      case "$1" in --target) target=$2 ;; --manifest-path) manifest=$2 ;; esac
      shift
    done
    out="$(dirname "$manifest")/target/$target/release"
    mkdir -p "$out" && cp "$FAKE_LIBRARY" "$out/librustyjson_nif.so"
    """)

    File.chmod!(Path.join(fake_bin, "cargo"), 0o755)
    armv7 = "armv7-unknown-linux-gnueabihf"
    fake_library = Path.join(ctx.tmp_dir, "built.so")
    File.write!(fake_library, TestArtifact.library_for(armv7))

    env =
      ChildProject.no_cargo_env(ctx.tmp_dir, fake_bin) ++
        [
          {"RUSTYJSON_BUILD", "1"},
          {"RUSTYJSON_TARGET", armv7},
          {"FAKE_LIBRARY", fake_library}
        ]

    installed = Path.join(ctx.native, "rustyjson_nif.so")
    assert {output, 0} = mix(ctx, env)
    refute output =~ "could not load the RustyJson NIF"
    assert File.read!(log) =~ "--target #{armv7}"
    assert File.read!(installed) == TestArtifact.library_for(armv7)
    refute File.exists?(installed <> ".stamp")

    # cargo built something else than the target's library: refused, naming both.
    File.write!(fake_library, TestArtifact.library_for("x86_64-unknown-linux-gnu"))
    assert {output, status} = mix(ctx, env)
    assert status != 0
    assert output =~ "for #{armv7} (RUSTYJSON_TARGET=#{armv7}), but it is not a library for it: "
    assert output =~ "it is not a 32-bit little-endian ELF file (class 2, data encoding 1)"

    assert {output, status} = mix(ctx, env ++ [{"FAKE_FAIL", "1"}])
    assert status != 0
    assert output =~ "can't find crate for core"

    assert output =~
             "cargo failed to cross-build the RustyJson NIF for #{armv7} (RUSTYJSON_TARGET=#{armv7}; exit status 101)"

    assert output =~ "`rustup target add #{armv7}`"
    assert output =~ "CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER"
  end
end
