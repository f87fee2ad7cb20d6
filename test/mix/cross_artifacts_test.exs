defmodule RustyJson.CrossArtifactsTest do
  # The precompiled NIFs for macOS and Windows, cross-built here by scripts/precompile and loaded by no VM here:
  # inspected instead. Each archive is checked against the checksum file and must hold the one library the VM
  # there loads, for the right CPU, exporting nif_init and needing nothing but what the system itself provides.
  # `make test` builds them first into RUSTYJSON_CROSS_ARTIFACTS (native/target/precompiled-desktop); without it
  # these tests are skipped.
  use ExUnit.Case, async: true

  Code.require_file("../support/object_files.exs", __DIR__)
  import Bitwise
  alias RustyJson.ObjectFiles

  @dir System.get_env("RUSTYJSON_CROSS_ARTIFACTS", "")
  if @dir == "" do
    @moduletag skip:
                 "RUSTYJSON_CROSS_ARTIFACTS names no directory of cross-built artifacts (make test sets it)"
  end

  # The DLLs a Windows library may import: Windows' own, in System32 on every Windows since 7. msvcrt.dll is the
  # system's C runtime (mingw-w64's default; the VM's CRT is the UCRT, but the NIF hands it no CRT memory or files:
  # it allocates through mimalloc and erl_nif); api-ms-win-* are API sets that the system maps to its own DLLs;
  # bcryptprimitives.dll is Rust's random source. Not allowed: mingw's libgcc_s_seh-1.dll, libwinpthread-1.dll,
  # libstdc++-6.dll, or any DLL a user would have to install. Kept in step with scripts/precompile.
  @windows_dlls ~r/\A(kernel32|ntdll|advapi32|userenv|ws2_32|bcrypt|bcryptprimitives|msvcrt|ucrtbase|api-ms-win-[a-z0-9-]+)\.dll\z/i

  describe "macOS" do
    for {target, cpu} <- [{"aarch64-apple-darwin", :arm64}, {"x86_64-apple-darwin", :x86_64}] do
      test "#{target}: a #{cpu} Mach-O library needing only libSystem, exporting nif_init" do
        lib = ObjectFiles.macho(library!(unquote(target), "librustyjson_nif.so"))

        assert lib.cpu == unquote(cpu)
        # MH_DYLIB or MH_BUNDLE: both load with dlopen, as the VM loads NIFs.
        assert lib.filetype in [6, 8]

        # Two-level namespace (MH_TWOLEVEL): each undefined symbol names the library it comes from.
        assert (lib.flags &&& 0x80) != 0
        assert lib.dylibs == ["/usr/lib/libSystem.B.dylib"]
        # Its own name, not the build machine's path; and no search paths of the build machine.
        assert lib.id in [nil, "librustyjson_nif.so"]
        assert lib.rpaths == []
        # Loads on macOS 11 (Big Sur) and later: the oldest that Apple-silicon Macs run.
        assert lib.min_macos != nil and lib.min_macos <= {11, 0}

        # Apple silicon runs signed code only: an ad-hoc signature (the linker's) is enough, if no later step
        # changed the file. Intel Macs run unsigned libraries; a signature there must hold all the same.
        assert lib.signature == :valid or (lib.signature == nil and unquote(cpu) == :x86_64)

        assert {"_nif_init", :defined, nil} in lib.symbols

        # Every undefined symbol comes from libSystem (ordinal 1), or is one of the VM's enif_* looked up when
        # it loads the library (0xFE, dynamic lookup: -undefined dynamic_lookup).
        undefined = for {name, :undefined, ordinal} <- lib.symbols, do: {name, ordinal}

        assert [] ==
                 Enum.reject(undefined, fn {name, ordinal} ->
                   ordinal == 1 or (ordinal == 0xFE and String.starts_with?(name, "_enif_"))
                 end)

        # The VM's functions are reached one way or the other: rustler 0.39 finds them with dlsym from nif_init.
        assert Enum.any?(undefined, fn {name, _} ->
                 name == "_dlsym" or String.starts_with?(name, "_enif_")
               end)
      end
    end
  end

  describe "Windows" do
    test "x86_64-pc-windows-gnu: an AMD64 DLL importing only Windows' own DLLs, exporting nif_init" do
      dll = ObjectFiles.pe(library!("x86_64-pc-windows-gnu", "rustyjson_nif.dll"))

      assert dll.machine == :amd64
      assert dll.dll?
      assert "nif_init" in dll.exports
      assert dll.imports != []
      assert [] == Enum.reject(dll.imports, &Regex.match?(@windows_dlls, &1))
      # No link time stamped in: the same DLL from every build.
      assert dll.timestamp == 0
    end
  end

  # The archive for `target`, checked against the checksum file beside it, holding `name` alone.
  defp library!(target, name) do
    [nif_version] =
      Regex.run(~r/"nif_version_(\d+_\d+)"/, File.read!("native/rustyjson_nif/Cargo.toml"),
        capture: :all_but_first
      )

    version = Mix.Project.config()[:version]

    archive =
      "#{Path.rootname(name)}-v#{version}-nif-#{String.replace(nif_version, "_", ".")}-#{target}"

    archive = archive <> Path.extname(name) <> ".tar.gz"
    {checksums, _} = Code.eval_file(Path.join(@dir, "checksum-Elixir.RustyJson.Native.exs"))
    bytes = File.read!(Path.join(@dir, archive))

    assert checksums[archive] ==
             "sha256:" <> Base.encode16(:crypto.hash(:sha256, bytes), case: :lower)

    assert {:ok, [{entry, library}]} = :erl_tar.extract({:binary, bytes}, [:compressed, :memory])
    assert List.to_string(entry) == name
    library
  end
end
