defmodule Mix.Tasks.Compile.RustyJsonNative do
  @moduledoc """
  Builds RustyJson's NIF with cargo and places it at `priv/native/rustyjson_nif.so`.

  Runs before the Elixir compiler, because `RustyJson.Native` loads the library in `@on_load`, which runs at
  compile time too. Set `RUSTYJSON_CARGO_PROFILE` to pick a cargo profile (default `release`).
  """
  use Mix.Task.Compiler

  @crate "rustyjson_nif"

  @impl true
  def run(_args) do
    cargo = System.find_executable("cargo") || Path.expand("~/.cargo/bin/cargo")

    unless File.exists?(cargo) do
      Mix.raise("""
      RustyJson needs cargo (Rust >= 1.91) to build its NIF, and cargo was not found on PATH or in ~/.cargo/bin.
      Install Rust with rustup (or run `make test`, which installs what is missing), then retry.
      """)
    end

    profile = System.get_env("RUSTYJSON_CARGO_PROFILE", "release")
    native = Path.expand("native", __DIR__)
    target_dir = Path.join(native, "target")

    args = [
      "build",
      "--profile",
      profile,
      "-p",
      @crate,
      "--manifest-path",
      Path.join(native, "Cargo.toml")
    ]

    # cargo's own output (progress and errors) goes to the user unchanged.
    {_, status} = System.cmd(cargo, args, into: IO.stream(:stdio, :line), stderr_to_stdout: true)

    if status != 0 do
      Mix.raise(
        "cargo failed to build the RustyJson NIF (exit status #{status}); its output is above"
      )
    end

    built = Path.join([target_dir, profile_dir(profile), library_file()])
    result = install(built, Path.expand("priv/native/#{@crate}.so", __DIR__))
    # On a clean clone priv/ did not exist when Mix linked the build's priv dir; link it now.
    Mix.Project.build_structure()
    result
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

  # Copy to a temporary name, then rename: a loaded library must never be overwritten in place.
  defp install(built, dest) do
    if File.exists?(dest) and File.read!(dest) == File.read!(built) do
      :noop
    else
      File.mkdir_p!(Path.dirname(dest))
      tmp = dest <> ".tmp#{System.unique_integer([:positive])}"
      File.cp!(built, tmp)
      File.rename!(tmp, dest)
      :ok
    end
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
      docs: [main: "readme", extras: ["README.md", "BENCHMARKS.md"]]
    ]
  end

  def application do
    [extra_applications: [:logger]]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]

  # bench/support: the structs bench/structs.exs encodes (protocols are consolidated, so they are compiled here).
  defp elixirc_paths(:dev), do: ["lib", "bench/support"]
  defp elixirc_paths(_), do: ["lib"]

  defp package do
    [
      licenses: ["MIT"],
      links: %{"GitHub" => @source_url},
      files: ~w(lib native/Cargo.toml native/Cargo.lock
                native/rustyjson_core/Cargo.toml native/rustyjson_core/src native/rustyjson_core/LICENSE-zmij
                native/rustyjson_nif/Cargo.toml native/rustyjson_nif/src
                mix.exs README.md BENCHMARKS.md CHANGELOG.md LICENSE)
    ]
  end
end
