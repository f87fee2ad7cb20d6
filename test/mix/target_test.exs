defmodule RustyJson.Precompiled.TargetTest do
  # Which target the NIF is for (mix/target.exs): each VM's own (as its system_architecture and OS say), the one
  # a cross-built release names (RUSTYJSON_TARGET, Nerves' variables), the file names of each, and the header
  # check that a library is one for its target.
  use ExUnit.Case, async: true

  Code.require_file("../../mix/precompiled.exs", __DIR__)
  alias RustyJson.Precompiled
  alias RustyJson.Precompiled.Target
  alias RustyJson.TestArtifact

  @armv7 ["armv7-unknown-linux-gnueabihf", "arm-unknown-linux-gnueabihf"]
  @windows ["x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu"]

  defp vm(arch, overrides \\ []) do
    Map.merge(
      %{
        system_architecture: arch,
        os_type: {:unix, :linux},
        wordsize: 8,
        processor_architecture: nil,
        musl: false,
        arm_architecture: nil
      },
      Map.new(overrides)
    )
  end

  test "each VM's targets, from what it says of itself" do
    cases = [
      {vm("x86_64-pc-linux-gnu"), ["x86_64-unknown-linux-gnu"]},
      {vm("x86_64-unknown-linux-gnu"), ["x86_64-unknown-linux-gnu"]},
      {vm("x86_64-pc-linux-musl"), ["x86_64-unknown-linux-musl"]},
      # Alpine's triple does not always say musl: the libraries mapped do.
      {vm("x86_64-pc-linux-gnu", musl: true), ["x86_64-unknown-linux-musl"]},
      {vm("aarch64-unknown-linux-gnu"), ["aarch64-unknown-linux-gnu"]},
      {vm("aarch64-alpine-linux-musl"), ["aarch64-unknown-linux-musl"]},
      {vm("riscv64-unknown-linux-gnu"), ["riscv64gc-unknown-linux-gnu"]},
      {vm("riscv64-alpine-linux-musl"), []},
      {vm("aarch64-apple-darwin23.0.0", os_type: {:unix, :darwin}), ["aarch64-apple-darwin"]},
      {vm("arm-apple-darwin21.6.0", os_type: {:unix, :darwin}), ["aarch64-apple-darwin"]},
      {vm("x86_64-apple-darwin22.4.0", os_type: {:unix, :darwin}), ["x86_64-apple-darwin"]},
      {vm("win32", os_type: {:win32, :nt}, processor_architecture: "AMD64"), @windows},
      {vm("win32", os_type: {:win32, :nt}), @windows},
      {vm("win32", os_type: {:win32, :nt}, processor_architecture: "ARM64"), []},
      {vm("win32", os_type: {:win32, :nt}, wordsize: 4), []},
      # 32-bit ARM: the CPU's architecture (from /proc/cpuinfo) decides, else the triple's.
      {vm("armv7l-unknown-linux-gnueabihf", wordsize: 4), @armv7},
      {vm("armv8l-unknown-linux-gnueabihf", wordsize: 4), @armv7},
      {vm("arm-unknown-linux-gnueabihf", wordsize: 4, arm_architecture: 7), @armv7},
      {vm("arm-unknown-linux-gnueabihf", wordsize: 4, arm_architecture: 8), @armv7},
      {vm("arm-unknown-linux-gnueabihf", wordsize: 4, arm_architecture: 6),
       ["arm-unknown-linux-gnueabihf"]},
      # The CPU unknown (qemu-user shows the host's cpuinfo): emulated, so ARMv7 or later.
      {vm("arm-unknown-linux-gnueabihf", wordsize: 4), @armv7},
      {vm("armv6l-unknown-linux-gnueabihf", wordsize: 4), ["arm-unknown-linux-gnueabihf"]},
      {vm("arm-unknown-linux-gnueabi", wordsize: 4, arm_architecture: 7), []},
      {vm("i686-pc-linux-gnu", wordsize: 4), []},
      {vm("x86_64-unknown-freebsd13.2"), []},
      {vm("powerpc64le-unknown-linux-gnu"), []}
    ]

    for {info, expected} <- cases do
      assert Target.host(info) == expected, inspect(info)
      assert Enum.all?(expected, &Target.supported?/1)
    end

    # This VM: one of the targets the suite runs on.
    assert Precompiled.target() in Target.supported()
  end

  test "the target a cross-built release names: RUSTYJSON_TARGET, else Nerves' variables" do
    host = vm("x86_64-pc-linux-gnu")
    nerves = %{"TARGET_OS" => "linux", "TARGET_ABI" => "gnu"}

    cases = [
      {%{}, {:host, ["x86_64-unknown-linux-gnu"]}},
      {%{"MIX_TARGET" => "host", "TARGET_ARCH" => "aarch64"},
       {:host, ["x86_64-unknown-linux-gnu"]}},
      {%{"RUSTYJSON_TARGET" => ""}, {:host, ["x86_64-unknown-linux-gnu"]}},
      # Raspberry Pi 4 (nerves_system_rpi4).
      {Map.merge(nerves, %{
         "MIX_TARGET" => "rpi4",
         "TARGET_ARCH" => "aarch64",
         "TARGET_CPU" => "cortex_a72"
       }), {:cross, ["aarch64-unknown-linux-gnu"], "MIX_TARGET=rpi4 aarch64/linux/gnu"}},
      # Raspberry Pi 3 in 32-bit mode (nerves_system_rpi3), and the ARMv6 Pi Zero.
      {%{
         "MIX_TARGET" => "rpi3",
         "TARGET_ARCH" => "arm",
         "TARGET_OS" => "linux",
         "TARGET_ABI" => "gnueabihf",
         "TARGET_CPU" => "cortex_a53"
       }, {:cross, @armv7, "MIX_TARGET=rpi3 arm/linux/gnueabihf"}},
      {%{
         "MIX_TARGET" => "rpi0",
         "TARGET_ARCH" => "arm",
         "TARGET_OS" => "linux",
         "TARGET_ABI" => "gnueabihf",
         "TARGET_CPU" => "arm1176jzf_s"
       }, {:cross, ["arm-unknown-linux-gnueabihf"], "MIX_TARGET=rpi0 arm/linux/gnueabihf"}},
      {Map.merge(nerves, %{"MIX_TARGET" => "x86_64", "TARGET_ARCH" => "x86_64"}),
       {:cross, ["x86_64-unknown-linux-gnu"], "MIX_TARGET=x86_64 x86_64/linux/gnu"}},
      {Map.merge(nerves, %{"MIX_TARGET" => "mangopi", "TARGET_ARCH" => "riscv64"}),
       {:cross, ["riscv64gc-unknown-linux-gnu"], "MIX_TARGET=mangopi riscv64/linux/gnu"}},
      {Map.merge(nerves, %{
         "MIX_TARGET" => "a",
         "TARGET_ARCH" => "aarch64",
         "TARGET_ABI" => "musl"
       }), {:cross, ["aarch64-unknown-linux-musl"], "MIX_TARGET=a aarch64/linux/musl"}},
      # RUSTYJSON_TARGET is taken over Nerves' variables.
      {Map.merge(nerves, %{
         "RUSTYJSON_TARGET" => "x86_64-pc-windows-gnu",
         "MIX_TARGET" => "rpi4",
         "TARGET_ARCH" => "aarch64"
       }), {:cross, ["x86_64-pc-windows-gnu"], "RUSTYJSON_TARGET=x86_64-pc-windows-gnu"}},
      {%{"RUSTYJSON_TARGET" => "x86_64-pc-windows-msvc"},
       {:cross, @windows, "RUSTYJSON_TARGET=x86_64-pc-windows-msvc"}},
      {%{"RUSTYJSON_TARGET" => "aarch64-apple-darwin"},
       {:cross, ["aarch64-apple-darwin"], "RUSTYJSON_TARGET=aarch64-apple-darwin"}}
    ]

    for {env, expected} <- cases do
      assert Target.resolve(env, host) == expected, inspect(env)
    end
  end

  test "a target that is not supported, or MIX_TARGET without Nerves' variables: one error naming it" do
    host = vm("x86_64-pc-linux-gnu")
    supported = Enum.join(Target.supported(), ", ")

    assert Target.resolve(%{"RUSTYJSON_TARGET" => "sparc64-unknown-linux-gnu"}, host) ==
             {:error,
              "RUSTYJSON_TARGET=sparc64-unknown-linux-gnu names sparc64-unknown-linux-gnu, a target RustyJson " <>
                "has no NIF for; the supported targets are: #{supported}"}

    mipsel = %{
      "MIX_TARGET" => "mips",
      "TARGET_ARCH" => "mipsel",
      "TARGET_OS" => "linux",
      "TARGET_ABI" => "musl"
    }

    assert {:error, message} = Target.resolve(mipsel, host)

    assert message ==
             "MIX_TARGET=mips mipsel/linux/musl names mipsel-linux-musl, a target RustyJson has no NIF for; " <>
               "the supported targets are: #{supported}"

    assert {:error, message} =
             Target.resolve(%{"MIX_TARGET" => "rpi4", "TARGET_ARCH" => "aarch64"}, host)

    assert message =~
             "MIX_TARGET=rpi4 is set, but not all of TARGET_ARCH, TARGET_OS and TARGET_ABI"

    assert message =~ "Set RUSTYJSON_TARGET"
  end

  test "file names: rustler_precompiled's, a .dll without the lib prefix on Windows" do
    assert Target.artifact_name("1.2.3", "2.16", "x86_64-pc-windows-gnu") ==
             "rustyjson_nif-v1.2.3-nif-2.16-x86_64-pc-windows-gnu.dll.tar.gz"

    assert Target.artifact_name("1.2.3", "2.16", "aarch64-apple-darwin") ==
             "librustyjson_nif-v1.2.3-nif-2.16-aarch64-apple-darwin.so.tar.gz"

    assert Target.artifact_name("1.2.3", "2.17", "armv7-unknown-linux-gnueabihf") ==
             "librustyjson_nif-v1.2.3-nif-2.17-armv7-unknown-linux-gnueabihf.so.tar.gz"

    for target <- Target.supported() do
      assert Target.of_artifact(Target.artifact_name("0.1.0", "2.16", target)) == target
      windows? = String.contains?(target, "windows")

      assert Target.library_name(target) ==
               if(windows?, do: "rustyjson_nif.dll", else: "librustyjson_nif.so")

      assert Target.installed_name(target) ==
               if(windows?, do: "rustyjson_nif.dll", else: "rustyjson_nif.so")
    end

    # An extension that is not the target's names no artifact.
    assert Target.of_artifact("librustyjson_nif-v0.1.0-nif-2.16-x86_64-pc-windows-gnu.so.tar.gz") ==
             nil

    assert Target.of_artifact("rustyjson_nif-v0.1.0-nif-2.16-x86_64-unknown-linux-gnu.dll.tar.gz") ==
             nil
  end

  test "picked for a list of targets: the first one listed (MSVC's else MinGW's, armv7 else ARMv6)" do
    nif = List.to_string(:erlang.system_info(:nif_version))
    name = &Target.artifact_name("1.0.0", nif, &1)
    gnu = name.("x86_64-pc-windows-gnu")
    arm = name.("arm-unknown-linux-gnueabihf")
    checksums = %{gnu => "sha256:AB", arm => "sha256:cd"}

    assert Precompiled.pick(checksums, "1.0.0", @windows) == {gnu, "ab"}
    assert Precompiled.pick(checksums, "1.0.0", @armv7) == {arm, "cd"}

    msvc = name.("x86_64-pc-windows-msvc")

    assert Precompiled.pick(Map.put(checksums, msvc, "sha256:ef"), "1.0.0", @windows) ==
             {msvc, "ef"}

    assert Precompiled.pick(checksums, "1.0.0", ["aarch64-apple-darwin"]) == nil
    assert Precompiled.pick(checksums, "1.0.0", []) == nil
  end

  test "a library is checked against its target's header: ELF class and machine, Mach-O CPU, PE DLL machine" do
    for target <- Target.supported() do
      assert Target.check_library(TestArtifact.library_for(target), target) == :ok, target
    end

    cases = [
      {"armv7-unknown-linux-gnueabihf", "aarch64-unknown-linux-gnu",
       "it is not a 64-bit little-endian ELF file (class 1, data encoding 1)"},
      {"aarch64-unknown-linux-gnu", "armv7-unknown-linux-gnueabihf",
       "it is not a 32-bit little-endian ELF file (class 2, data encoding 1)"},
      {"riscv64gc-unknown-linux-gnu", "x86_64-unknown-linux-gnu",
       "it is built for ELF machine 243 (riscv64), not 62 (x86_64)"},
      {"x86_64-apple-darwin", "aarch64-apple-darwin",
       "it is built for Mach-O CPU type 0x1000007, not 0x100000c"},
      {"x86_64-unknown-linux-gnu", "x86_64-apple-darwin",
       "it is not a 64-bit Mach-O file (it begins <<127, 69, 76, 70, 2,"},
      {"x86_64-apple-darwin", "x86_64-pc-windows-gnu", "it is not a PE file (it begins "},
      {"x86_64-pc-windows-gnu", "x86_64-unknown-linux-gnu",
       "it is not an ELF file (it begins <<77, 90, 0,"}
    ]

    for {built_for, target, what} <- cases do
      assert {:error, message} = Target.check_library(TestArtifact.library_for(built_for), target)
      assert String.starts_with?(message, what), "#{built_for} as #{target}: #{message}"
    end

    # A PE executable (no DLL bit), an ARM64 DLL, and a PE header cut short.
    assert Target.check_library(TestArtifact.pe(0x8664, 0x0022), "x86_64-pc-windows-gnu") ==
             {:error, "it is a PE executable, not a DLL"}

    assert Target.check_library(TestArtifact.pe(0xAA64, 0x2022), "x86_64-pc-windows-msvc") ==
             {:error, "it is built for PE machine 0xaa64, not 0x8664"}

    assert Target.check_library(
             binary_part(TestArtifact.pe(0x8664, 0x2022), 0, 70),
             "x86_64-pc-windows-gnu"
           ) ==
             {:error, "its PE header is missing or cut short"}
  end
end
