Code.require_file("mix/precompiled.exs", __DIR__)

defmodule Mix.Tasks.Compile.RustyJsonNative do
  @moduledoc """
  Installs RustyJson's NIF at `priv/native/rustyjson_nif.so` (`.dll` for Windows): a precompiled one when the
  checksum file beside mix.exs lists an artifact for the target (its SHA-256 verified before use), otherwise built
  with cargo. The target is the running VM's, or another machine's for a cross-built release (mix/target.exs).
  Once a precompiled one is installed, its stamp (`rustyjson_nif.so.stamp`) lets later compiles do nothing, with
  no cache or network, while the checksum file names the same archive and the library is unchanged.

  Runs before the Elixir compiler, because `RustyJson.Native` loads the library in `@on_load`, which runs at
  compile time too. Settings (environment variable, or `config :rusty_json, ...`):
    * `RUSTYJSON_BUILD=1` / `build_from_source: true`: always build with cargo (a `-dev` version always does).
    * `RUSTYJSON_PRECOMPILED_URL` / `precompiled_url:`: where artifacts are (https, `file://` or a directory);
      the project's release of this version by default.
    * `RUSTYJSON_CACHE_DIR`: the download cache (default: the user's cache directory, `rusty_json/precompiled`).
    * `RUSTYJSON_CARGO_PROFILE`: the cargo profile of a build (default `release`).
    * `RUSTYJSON_TARGET`: the target triple of another machine to install (or cross-build) the NIF for; Nerves'
      `MIX_TARGET` with `TARGET_ARCH`/`TARGET_OS`/`TARGET_ABI` names it too.
  """
  use Mix.Task.Compiler

  alias RustyJson.Precompiled

  @crate "rustyjson_nif"
  # The lowest Rust that builds the NIF: native/Cargo.toml's rust-version.
  @rust_version "1.91"

  @impl true
  def run(_args) do
    {targets, cross} = targets!()

    # RustyJson.Native's @on_load runs in this VM as the Elixir compiler loads it: a library for another machine
    # is not loaded there (nor warned about), it is for the release.
    if cross,
      do: :persistent_term.put({RustyJson.Native, :built_for}, cross),
      else: :persistent_term.erase({RustyJson.Native, :built_for})

    {result, dest} =
      case precompiled(targets) do
        {:ok, name, sha256, base_url, target} ->
          dest = dest(target)

          case Precompiled.install(name, sha256, base_url, cache_dir(), dest) do
            done when done in [:ok, :noop] -> {done, dest}
            {:error, why} -> build!(targets, cross, {name, base_url, why})
          end

        :build ->
          build!(targets, cross, nil)
      end

    remove_others(dest)
    # On a clean clone priv/ did not exist when Mix linked the build's priv dir; link it now.
    Mix.Project.build_structure()
    result
  end

  # The targets the NIF is for, best first, and `{target, why}` when that is another machine than this VM (a
  # cross-built release), from RUSTYJSON_TARGET or Nerves' variables; one error when they name no known target.
  defp targets! do
    case Precompiled.Target.resolve(System.get_env()) do
      {:host, targets} ->
        {targets, nil}

      {:cross, [target | _] = targets, why} ->
        if target in Precompiled.Target.host(Precompiled.Target.vm_info()),
          do: {targets, nil},
          else: {targets, {target, why}}

      {:error, message} ->
        Mix.raise(message)
    end
  end

  # Where the VM of `target` loads the library from (this VM's when nil): rustyjson_nif.so, or .dll on Windows.
  defp dest(nil), do: dest(if(match?({:win32, _}, :os.type()), do: "windows", else: "unix"))
  defp dest("windows"), do: dest("x86_64-pc-windows-gnu")
  defp dest("unix"), do: dest("x86_64-unknown-linux-gnu")

  defp dest(target),
    do: Path.expand("priv/native/#{Precompiled.Target.installed_name(target)}", __DIR__)

  # The library for another system (the .so where the .dll went, or the reverse) would go into a release too.
  defp remove_others(dest) do
    for name <- ["rustyjson_nif.so", "rustyjson_nif.dll"],
        other = Path.join(Path.dirname(dest), name),
        other != dest do
      _ = File.rm(other)
      Precompiled.remove_stamp(other)
    end

    :ok
  end

  # The artifact to install, or `:build`: building forced, a `-dev` version, an unsupported target, no checksum
  # file (a checkout of the repository) or no artifact for the targets. The checksum file is read only when it
  # decides (a malformed one raises).
  defp precompiled(targets) do
    version = Mix.Project.config()[:version]

    cond do
      force_build?() or String.ends_with?(version, "-dev") or targets == [] ->
        :build

      picked = Precompiled.pick(checksums(), version, targets) ->
        {name, sha256} = picked
        {:ok, name, sha256, base_url(version), Precompiled.Target.of_artifact(name)}

      true ->
        :build
    end
  end

  defp checksums,
    do: Precompiled.read_checksums(Path.expand(Precompiled.checksum_file(), __DIR__))

  defp force_build? do
    System.get_env("RUSTYJSON_BUILD") in ["1", "true"] or
      Application.get_env(:rusty_json, :build_from_source, false) == true
  end

  defp base_url(version) do
    env("RUSTYJSON_PRECOMPILED_URL") ||
      Application.get_env(:rusty_json, :precompiled_url) ||
      "#{Mix.Project.config()[:source_url]}/releases/download/v#{version}"
  end

  # An environment variable's value; an empty one counts as unset.
  defp env(name), do: if(System.get_env(name) in [nil, ""], do: nil, else: System.get_env(name))

  defp cache_dir do
    env("RUSTYJSON_CACHE_DIR") ||
      Path.join(:filename.basedir(:user_cache, ~c"rusty_json") |> List.to_string(), "precompiled")
  end

  # `tried`: the artifact that could not be had ({name, base URL, why}), for the error when cargo is missing too.
  # For another machine (`cross`), `cargo build --target`. Returns {:ok, where it was installed}.
  defp build!(targets, cross, tried) do
    cargo = System.find_executable("cargo") || Path.expand("~/.cargo/bin/cargo")

    unless File.exists?(cargo), do: Mix.raise(no_cargo_message(targets, cross, tried))

    with {name, base_url, why} <- tried do
      Mix.shell().error(
        "RustyJson: the precompiled NIF #{name} from #{base_url} was not installed (#{why}); " <>
          "building it with cargo instead"
      )
    end

    profile = System.get_env("RUSTYJSON_CARGO_PROFILE", "release")
    native = Path.expand("native", __DIR__)
    target_dir = Path.join(native, "target")
    {target, _why} = cross || {nil, nil}

    args =
      ["build", "--profile", profile, "-p", @crate, "--manifest-path"] ++
        [Path.join(native, "Cargo.toml")] ++ if(target, do: ["--target", target], else: [])

    # cargo's own output (progress and errors) goes to the user unchanged.
    {_, status} = System.cmd(cargo, args, into: IO.stream(:stdio, :line), stderr_to_stdout: true)

    if status != 0, do: Mix.raise(cargo_failed(cross, status))

    built =
      if target,
        do:
          Path.join([
            target_dir,
            target,
            profile_dir(profile),
            Precompiled.Target.cargo_library(target)
          ]),
        else: Path.join([target_dir, profile_dir(profile), library_file()])

    library = File.read!(built)

    with {target, why} <- cross,
         {:error, what} <- Precompiled.Target.check_library(library, target) do
      Mix.raise(
        "cargo built #{built} for #{target} (#{why}), but it is not a library for it: #{what}"
      )
    end

    dest = dest(target)
    install(library, dest)
    {:ok, dest}
  end

  defp cargo_failed(nil, status),
    do: "cargo failed to build the RustyJson NIF (exit status #{status}); its output is above"

  defp cargo_failed({target, why}, status) do
    linker = "CARGO_TARGET_#{target |> String.upcase() |> String.replace("-", "_")}_LINKER"

    "cargo failed to cross-build the RustyJson NIF for #{target} (#{why}; exit status #{status}); its output " <>
      "is above. Cross-building needs Rust's standard library for the target (`rustup target add #{target}`) " <>
      "and a linker for it (#{linker}); or unset RUSTYJSON_BUILD to install its precompiled NIF."
  end

  defp no_cargo_message(targets, nil, nil) do
    """
    RustyJson needs cargo (Rust >= #{@rust_version}) to build its NIF, and cargo was not found on PATH or in \
    ~/.cargo/bin; no precompiled NIF is listed for this VM (target #{List.first(targets) || "unsupported"}, NIF \
    version #{:erlang.system_info(:nif_version)}). Install Rust #{@rust_version} or later with rustup, then retry.\
    """
  end

  defp no_cargo_message(_targets, {target, why}, nil) do
    """
    RustyJson needs cargo (Rust >= #{@rust_version}) to build its NIF, and cargo was not found on PATH or in \
    ~/.cargo/bin; no precompiled NIF is listed for #{target} (#{why}, NIF version \
    #{:erlang.system_info(:nif_version)}). Install Rust #{@rust_version} or later with rustup and the target's \
    standard library and linker, then retry.\
    """
  end

  defp no_cargo_message(_targets, _cross, {name, base_url, why}) do
    """
    RustyJson could not get its precompiled NIF #{name} (target #{Precompiled.Target.of_artifact(name)}, NIF \
    version #{:erlang.system_info(:nif_version)}) from #{base_url}: #{why}
    and cargo, to build it instead, was not found on PATH or in ~/.cargo/bin. Either install Rust \
    #{@rust_version} or later with rustup, or point RUSTYJSON_PRECOMPILED_URL (or config :rusty_json, \
    precompiled_url:) at a URL or directory holding the artifact.\
    """
  end

  defp profile_dir("dev"), do: "debug"
  defp profile_dir(profile), do: profile

  defp library_file do
    case :os.type() do
      {:unix, :darwin} -> "lib#{@crate}.dylib"
      {:win32, _} -> "#{@crate}.dll"
      _ -> "lib#{@crate}.so"
    end
  end

  # cargo's build replaces any precompiled library: its stamp goes first, so no later compile takes it for one.
  defp install(library, dest) do
    :ok = Precompiled.remove_stamp(dest)
    Precompiled.write_atomically(dest, library)
  end
end

defmodule RustyJson.MixProject do
  use Mix.Project

  @version "0.1.0"
  @source_url "https://github.com/rusty-json/rusty_json"

  def project do
    [
      app: :rusty_json,
      version: @version,
      elixir: "~> 1.14",
      compilers: [:rusty_json_native | Mix.compilers()],
      elixirc_paths: elixirc_paths(Mix.env()),
      start_permanent: Mix.env() == :prod,
      deps: [],
      description:
        "A fast JSON library for Elixir with a Rust NIF core; a drop-in replacement for Jason.",
      package: package(),
      source_url: @source_url,
      docs: docs()
    ]
  end

  def application do
    [extra_applications: [:logger]]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]

  # bench/support: the structs bench/structs.exs encodes (protocols are consolidated, so they are compiled here).
  defp elixirc_paths(:dev), do: ["lib", "bench/support"]
  defp elixirc_paths(_), do: ["lib"]

  @guides ~w(guides/installation.md guides/options.md guides/streams-and-pointers.md
              guides/migrating-from-jason.md guides/coming-from-rustyjson-0.3.md
              guides/safety-and-scheduling.md guides/benchmarks.md)

  # ex_doc's pages: the README first, the guides grouped, then the report, the contributor's guide and the log.
  defp docs do
    [
      main: "readme",
      extras: ["README.md"] ++ @guides ++ ["BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md"],
      groups_for_extras: [
        Guides: @guides,
        Project: ["BENCHMARKS.md", "CONTRIBUTING.md", "CHANGELOG.md"]
      ]
    ]
  end

  defp package do
    [
      licenses: ["MIT"],
      links: %{"GitHub" => @source_url},
      files: ~w(lib native/Cargo.toml native/Cargo.lock
                native/rustyjson_core/Cargo.toml native/rustyjson_core/src
                native/rustyjson_nif/Cargo.toml native/rustyjson_nif/src
                mix.exs mix/precompiled.exs mix/target.exs checksum-Elixir.RustyJson.Native.exs
                README.md BENCHMARKS.md CHANGELOG.md CONTRIBUTING.md LICENSE) ++ @guides
    ]
  end
end
